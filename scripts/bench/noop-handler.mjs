// The bench's handler for `jobq work`: does nothing, so the queue's own cost is what is measured.
export default async function noop() {}
