import type { Command } from 'commander';

export function registerAdminCommands(program: Command): void {
  program.command('admin').description('Operator commands (workspaces, members, keys, projects)');
}
