import './tracing';
import { loadConfigOrExit } from '@pack/config';
import { runMain } from '@pack/runtime';
import { orchestratorEnvSchema } from './config';
import { orchestratorService } from './service';

runMain(orchestratorService, loadConfigOrExit(orchestratorEnvSchema));
