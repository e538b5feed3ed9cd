export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __packInfraStop?: () => Promise<void> }).__packInfraStop?.();
}
