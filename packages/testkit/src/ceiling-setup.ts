import { CEILINGS } from './ceilings';

/** jest setupFilesAfterEnv: every test and hook gets the kit's test ceiling unless it names a longer one. */
jest.setTimeout(CEILINGS.test);
