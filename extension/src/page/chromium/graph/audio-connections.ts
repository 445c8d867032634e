// Which recorded `connect(...)` calls a `disconnect(...)` call removes, per the WebAudio overloads:
//   disconnect()                          every connection
//   disconnect(output)                    every connection from that output
//   disconnect(destination)               every connection to that node or param
//   disconnect(destination, output)       ... from that output
//   disconnect(destination, output, input) ... into that input
// `connect(destination, output = 0, input = 0)` is what a connection was recorded as. Pure: the
// interposition replays the survivors on the node it rebinds after a reacquire.

export function disconnects(args: readonly unknown[], conn: readonly unknown[]): boolean {
  if (args.length === 0) return true;
  const [target, output, input] = args;
  const [dest, connOutput = 0, connInput = 0] = conn;
  if (typeof target === 'number') return connOutput === target;
  if (dest !== target) return false;
  if (output !== undefined && connOutput !== output) return false;
  if (input !== undefined && connInput !== input) return false;
  return true;
}
