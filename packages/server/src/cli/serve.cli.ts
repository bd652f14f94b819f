import type { Command } from '../cli-kit/command.ts';

export const serveCommand: Command<undefined, undefined> = {
  name: 'serve',
  summary: 'run the Parley server (what `npm start` does)',
  options: {},
  needsContext: false,
  async run() {
    const { startServer } = await import('../main.ts');
    await startServer();
    return undefined;
  },
};
