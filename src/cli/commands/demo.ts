// `workhorse demo`: placeholder until the demo module lands.
import type { Command } from '../command.js';

export const demoCommand: Command = {
  name: 'demo',
  summary: 'run the fleet demo on the embedded PostgreSQL (or DATABASE_URL)',
  usage: 'workhorse demo',
  async run() {
    return 0;
  },
};
