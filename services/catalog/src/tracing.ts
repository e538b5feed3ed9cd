import { startTracing } from '@pack/tracing';

/** First import of main.ts: the SDK starts before the instrumented modules load (decision 0047). */
startTracing('catalog');
