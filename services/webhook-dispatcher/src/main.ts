import './tracing';
import { loadConfigOrExit } from '@pack/config';
import { runMain } from '@pack/runtime';
import { webhookDispatcherEnvSchema } from './config';
import { webhookDispatcherService } from './service';

runMain(webhookDispatcherService, loadConfigOrExit(webhookDispatcherEnvSchema));
