// Entry of a render worker thread. Workers do not inherit the parent's tsx loader (it registers
// through module hooks, not execArgv), so this plain-JS file registers it, then loads the TypeScript
// worker. Resolving 'tsx' from here keeps it independent of the working directory.
import { register } from 'tsx/esm/api';

register();
await import('./worker-main.ts');
