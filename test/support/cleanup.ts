import { afterAll } from '@jest/globals';
import { CtopoProcess } from './operator-process.js';

// A test that fails half-way must not leave an operator or agent running: it would keep
// writing to the shared control plane and keep jest from exiting.
afterAll(async () => {
  await CtopoProcess.stopAll();
});
