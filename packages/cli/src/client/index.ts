import type { Command } from 'commander';

export function registerClientCommands(_program: Command): void {}
