/*
 * Node's spawn closes only the descriptors marked close-on-exec: whatever the worker inherited
 * without the mark (a pipe or a file its launcher left open, a supervisor's socket) would reach
 * every program it starts, tenant code included. This step closes every descriptor above the ones
 * meant for the next program, then becomes it: perl (perl-base, part of every Debian system) because
 * a POSIX shell cannot name a descriptor above 9 and bash adds variables to the environment it
 * passes on. Its own descriptors are close-on-exec (above $^F), and it leaves the environment as
 * it found it.
 */

/** perl, which {@link closingOthers} runs. */
export const PERL = '/usr/bin/perl';

const CLOSE_AND_EXEC = [
  'use POSIX ();',
  'my $keep = shift;',
  `opendir(my $dir, '/proc/self/fd') or die "cannot list /proc/self/fd: $!\\n";`,
  'my @open = grep { /^\\d+$/ && $_ > $keep } readdir $dir;',
  'closedir $dir;',
  'POSIX::close($_) for @open;',
  'exec { $ARGV[0] } @ARGV;',
  'die "cannot run $ARGV[0]: $!\\n";',
].join(' ');

/** `command`, started with descriptors 0 to `keep` only (every other one closed first). */
export function closingOthers(keep: number, command: readonly string[]): string[] {
  return [PERL, '-e', CLOSE_AND_EXEC, '--', String(keep), ...command];
}
