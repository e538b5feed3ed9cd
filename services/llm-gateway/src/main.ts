import './tracing';
import { loadConfigOrExit } from '@pack/config';
import { runMain } from '@pack/runtime';
import { llmGatewayEnvSchema } from './config';
import { llmGatewayService } from './service';

runMain(llmGatewayService, loadConfigOrExit(llmGatewayEnvSchema));
