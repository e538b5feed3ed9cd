import './tracing';
import { loadConfigOrExit } from '@pack/config';
import { runMain } from '@pack/runtime';
import { catalogEnvSchema } from './config';
import { catalogService } from './service';

runMain(catalogService, loadConfigOrExit(catalogEnvSchema));
