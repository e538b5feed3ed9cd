import './tracing';
import { loadConfigOrExit } from '@pack/config';
import { runMain } from '@pack/runtime';
import { settingsEnvSchema } from './config';
import { settingsService } from './service';

runMain(settingsService, loadConfigOrExit(settingsEnvSchema));
