/** Reads the operations files (deploy/, docker-compose.yml) and the services' env schemas for the checks. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export const REPO = path.resolve(__dirname, '../..');
export const K8S_DIR = path.join(REPO, 'deploy/k8s');

/** Every folder under services/ (each must be an entry of deploy/services.yaml). */
export function serviceDirs(): string[] {
  return readdirSync(path.join(REPO, 'services'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** An entry of deploy/services.yaml, the one list of the platform's services. */
export interface PlatformService {
  name: string;
  port: number;
  metrics_port: number;
  public?: boolean;
  /** Whether services/<name>/src/main.ts exists (false: planned, nothing deployed yet). */
  built: boolean;
}

export function platformServices(): PlatformService[] {
  const [file] = readYaml('deploy/services.yaml') as { services: Omit<PlatformService, 'built'>[] }[];
  return file!.services.map((entry) => ({
    ...entry,
    built: existsSync(path.join(REPO, 'services', entry.name, 'src', 'main.ts')),
  }));
}

/** The services that exist (have a main.ts), in the list's order. */
export function builtServices(): PlatformService[] {
  return platformServices().filter((entry) => entry.built);
}

/** `llm-gateway` -> `LLM_GATEWAY`: the prefix of the variables that name a service (`LLM_GATEWAY_URL`). */
export function envPrefix(service: string): string {
  return service.toUpperCase().replace(/-/g, '_');
}

/** All YAML documents of a file, as plain data (merge keys `<<` resolved, as docker compose does). */
export function readYaml(file: string): unknown[] {
  const text = readFileSync(path.join(REPO, file), 'utf8');
  return parseAllDocuments(text, { merge: true }).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
    return doc.toJS() as unknown;
  });
}

// ---- env schemas -------------------------------------------------------------------------------

/** The part of a zod object schema the checks use (no zod import needed here). */
export interface EnvField {
  safeParse(value: unknown): { success: boolean; data?: unknown };
}
export interface EnvSchema {
  shape: Record<string, EnvField>;
}

/**
 * The env schema of a service, by convention: the one export of `services/<dir>/src/config.ts`
 * whose name ends in `EnvSchema` (gatewayEnvSchema, settingsEnvSchema, catalogEnvSchema, ...).
 */
export async function loadEnvSchema(service: string): Promise<EnvSchema> {
  const file = path.join(REPO, 'services', service, 'src', 'config.ts');
  if (!existsSync(file)) throw new Error(`services/${service}/src/config.ts does not exist`);
  const module = (await import(file)) as Record<string, unknown>;
  const names = Object.keys(module).filter((name) => name.endsWith('EnvSchema'));
  if (names.length !== 1) {
    throw new Error(
      `services/${service}/src/config.ts must export exactly one *EnvSchema, found: ${names.join(', ') || 'none'}`,
    );
  }
  const schema = module[names[0]!] as Partial<EnvSchema> | undefined;
  if (!schema?.shape || typeof schema.shape !== 'object')
    throw new Error(`${names[0]} is not a zod object schema`);
  return schema as EnvSchema;
}

/** What a variable is when unset: undefined for required, otherwise its default (or undefined). */
export function defaultOf(field: EnvField): { required: boolean; value: unknown } {
  const result = field.safeParse(undefined);
  return { required: !result.success, value: result.data };
}

// ---- Kubernetes ----------------------------------------------------------------------------------

export interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: Meta;
}
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
  };
}
export interface Probe {
  httpGet?: { path: string; port: number | string };
}
export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    runAsNonRoot?: boolean;
  };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
export interface Volume {
  name: string;
  secret?: { secretName: string; items?: { key: string; path: string }[] };
  emptyDir?: object;
}
export interface Deployment extends K8sObject {
  spec: {
    replicas?: number;
    selector: { matchLabels?: Record<string, string> };
    template: {
      metadata: Partial<Meta>;
      spec: {
        containers: Container[];
        volumes?: Volume[];
        securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
      };
    };
  };
}
export interface KService extends K8sObject {
  spec: {
    type?: string;
    selector?: Record<string, string>;
    ports: { name?: string; port: number; targetPort?: number | string }[];
  };
}
export interface Hpa extends K8sObject {
  spec: {
    scaleTargetRef: { apiVersion: string; kind: string; name: string };
    minReplicas?: number;
    maxReplicas: number;
    metrics?: { type: string; resource?: { name: string } }[];
  };
}
export interface Pdb extends K8sObject {
  spec: {
    minAvailable?: number | string;
    maxUnavailable?: number | string;
    selector: { matchLabels?: Record<string, string> };
  };
}
export interface ConfigMap extends K8sObject {
  data?: Record<string, string>;
}
export interface Secret extends K8sObject {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}
export interface Ingress extends K8sObject {
  spec: {
    defaultBackend?: { service?: { name: string } };
    rules?: { http?: { paths: { backend: { service?: { name: string } } }[] } }[];
  };
}

export interface NetworkPolicyPeer {
  podSelector?: { matchLabels?: Record<string, string> };
  namespaceSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: { cidr: string };
}
export interface NetworkPolicy extends K8sObject {
  spec: {
    podSelector: { matchLabels?: Record<string, string> };
    policyTypes?: string[];
    ingress?: { from?: NetworkPolicyPeer[]; ports?: { port?: number | string }[] }[];
  };
}

/** Every YAML file in deploy/k8s, relative to it. */
export function k8sFiles(): string[] {
  return readdirSync(K8S_DIR)
    .filter((name) => /\.ya?ml$/.test(name))
    .sort();
}

export function kustomizationResources(): string[] {
  const [kustomization] = readYaml('deploy/k8s/kustomization.yaml') as { resources?: string[] }[];
  return kustomization?.resources ?? [];
}

/** The objects the kustomization applies, plus the example Secret (not applied, but referenced). */
export function k8sObjects(): { applied: K8sObject[]; all: K8sObject[] } {
  const load = (files: string[]) =>
    files.flatMap((file) =>
      readYaml(path.join('deploy/k8s', file)).filter((doc): doc is K8sObject => doc != null),
    );
  const applied = load(kustomizationResources());
  const others = load(
    k8sFiles().filter((file) => file !== 'kustomization.yaml' && !kustomizationResources().includes(file)),
  );
  return { applied, all: [...applied, ...others] };
}

export function ofKind<T extends K8sObject>(objects: K8sObject[], kind: string): T[] {
  return objects.filter((object) => object.kind === kind) as T[];
}

/** True when every label of the selector is on the pod. */
export function selects(
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}

// ---- docker compose ----------------------------------------------------------------------------

export interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: (string | number | { target: number; published?: string | number })[];
  healthcheck?: { test?: string[] | string };
  depends_on?: string[] | Record<string, { condition?: string }>;
  volumes?: (string | { source?: string; target?: string })[];
}
export interface ComposeFile {
  services: Record<string, ComposeService>;
}

export function compose(): ComposeFile {
  return readYaml('docker-compose.yml')[0] as ComposeFile;
}

/** A compose service's environment as name -> value (null when only the name is given). */
export function composeEnv(service: ComposeService): Record<string, string | null> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry) => {
        const at = entry.indexOf('=');
        return at < 0 ? [entry, null] : [entry.slice(0, at), entry.slice(at + 1)];
      }),
    );
  }
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => [name, value === null ? null : String(value)]),
  );
}

/** The container ports a compose service publishes on the host. */
export function publishedPorts(service: ComposeService): number[] {
  return (service.ports ?? []).map((port) => {
    if (typeof port === 'object') return port.target;
    const parts = String(port).split(':');
    return Number(parts[parts.length - 1]!.split('/')[0]);
  });
}

export function commandLine(command: string[] | string | undefined): string {
  return Array.isArray(command) ? command.join(' ') : (command ?? '');
}
