import type { z } from 'zod';
import { serviceEnvSchema } from '@pack/config';
import { withEncryptionEnv } from '@pack/secrets';

/** The base service variables and the encryption key ring (provider secrets in extra_data). */
export const llmGatewayEnvSchema = withEncryptionEnv(
  serviceEnvSchema({ port: 8083, database: 'pack_llm_gateway' }),
);
export type LlmGatewayConfig = z.infer<typeof llmGatewayEnvSchema>;
