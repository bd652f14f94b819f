import { companyCommands } from '../companies/companies.cli.ts';
import type { Command } from './command.ts';
import { serveCommand } from './serve.cli.ts';

/** Every CLI command, listed explicitly (each capability exports its own from its folder). */
export const commands: Command[] = [serveCommand, ...companyCommands] as Command[];
