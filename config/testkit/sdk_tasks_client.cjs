// Drives the server binary over stdio with the TypeScript SDK 1.x client's experimental
// Tasks API (2025-11-25): a tool call as a task streamed to its result, getTask and
// listTasks, then a second task cancelled while it works. Prints a JSON report on its
// last line.
//
// Usage: node sdk_tasks_client.cjs <server-binary>
"use strict";

const binary = process.argv[process.argv.length - 1];
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

async function main() {
  const client = new Client({ name: "e2e-ts-v1-tasks", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command: binary, args: ["--stdio"], env: process.env, stderr: "ignore" }),
  );
  const tasks = client.experimental.tasks;
  const seen = [];
  let taskId = null;
  let result = null;
  const stream = tasks.callToolStream(
    { name: "answer", arguments: { query: "Today's Tokyo weather" } },
    undefined,
    { task: { ttl: 60000 } },
  );
  for await (const message of stream) {
    seen.push(message.type);
    if (message.type === "taskCreated") taskId = message.task.taskId;
    if (message.type === "result") result = message.result;
    if (message.type === "error") throw message.error;
  }
  const got = await tasks.getTask(taskId);
  const listed = await tasks.listTasks();

  // A second task, cancelled once created.
  let cancelledId = null;
  const hang = tasks.callToolStream(
    { name: "answer", arguments: { query: "please-hang-forever" } },
    undefined,
    { task: {} },
  );
  for await (const message of hang) {
    if (message.type === "taskCreated") {
      cancelledId = message.task.taskId;
      // Let the task's upstream request reach the fake, which then sees it closed.
      await new Promise((r) => setTimeout(r, 300));
      await tasks.cancelTask(cancelledId);
      break;
    }
  }
  const cancelled = await tasks.getTask(cancelledId);
  const report = {
    seen,
    task_id: taskId,
    status_after: got.status,
    listed: listed.tasks.map((t) => t.taskId),
    text: result.content[0].text,
    structured: result.structuredContent ?? null,
    cancelled_status: cancelled.status,
  };
  await client.close();
  console.log(JSON.stringify(report));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
