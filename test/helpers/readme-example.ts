/** What examples/readme-example.mjs prints on a database of its own, as the README shows it. */
export const README_EXAMPLE_OUTPUT = ['sending to ann@example.com, attempt 1', '1 completed', '{"unclaimed":0,"claimed":0,"done":0,"failed":0,"cancelled":0,"scheduled":1}', ''].join('\n');
