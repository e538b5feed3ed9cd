import './tracing';
import { loadConfigOrExit } from '@pack/config';
import { runMain } from '@pack/runtime';
import { gatewayEnvSchema } from './config';
import { gatewayService } from './service';

const config = loadConfigOrExit(gatewayEnvSchema);
runMain(gatewayService, { ...config, PORT: config.GATEWAY_PORT ?? config.PORT });
