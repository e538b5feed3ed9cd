import { connectAny } from '@pack/broker';
import mongoose from 'mongoose';
import { CEILINGS } from './ceilings';

/** Removes what a test created, so repeated runs leave nothing behind. */
export async function dropDatabase(mongoUrl: string, dbName: string): Promise<void> {
  const connection = await mongoose
    .createConnection(mongoUrl, { dbName, serverSelectionTimeoutMS: CEILINGS.wait })
    .asPromise();
  try {
    await connection.dropDatabase();
  } finally {
    await connection.close();
  }
}

export async function deleteQueues(amqpUrl: string, queues: readonly string[]): Promise<void> {
  const connection = await connectAny(amqpUrl);
  try {
    for (const queue of queues) {
      const channel = await connection.createChannel();
      await channel.deleteQueue(queue).catch(() => undefined);
      await channel.close().catch(() => undefined);
    }
  } finally {
    await connection.close();
  }
}

interface StoppableService {
  stop(): Promise<void>;
  context: {
    config: { MONGO_URL: string; MONGO_DB: string; AMQP_URL: string };
    broker: { declaredQueues(): string[] };
  };
}

/** Stops a service started in a test and removes its database and queues. */
export async function stopAndClean(service: StoppableService): Promise<void> {
  const { MONGO_URL, MONGO_DB, AMQP_URL } = service.context.config;
  const queues = service.context.broker.declaredQueues();
  await service.stop();
  await dropDatabase(MONGO_URL, MONGO_DB);
  if (queues.length > 0) await deleteQueues(AMQP_URL, queues);
}
