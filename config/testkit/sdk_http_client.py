"""Drives a server already listening (--http) with the official MCP Python SDK over
Streamable HTTP: lists the tools, calls one with progress, cancels a second call mid-way,
and prints a JSON report on its last line.

Usage: python3 sdk_http_client.py <auto|modern|legacy> <url>
"""

import asyncio
import json
import sys

import anyio
from mcp.client.client import Client


async def main(mode: str, url: str) -> None:
    sdk_mode = {"auto": "auto", "modern": "2026-07-28", "legacy": "legacy"}[mode]
    async with Client(url, mode=sdk_mode) as client:
        tools = await client.list_tools()
        progress = []

        async def on_progress(value, total, message):
            progress.append(value)

        result = await client.call_tool(
            "answer", {"query": "Today's Tokyo weather"}, progress_callback=on_progress
        )
        # A call cancelled mid-way, once it reports progress.
        started = anyio.Event()

        async def started_on_progress(value, total, message):
            started.set()

        cancel = "answered"
        async with anyio.create_task_group() as tg:

            async def hung() -> None:
                await client.call_tool(
                    "answer", {"query": "please-hang-forever"}, progress_callback=started_on_progress
                )

            tg.start_soon(hung)
            with anyio.fail_after(15):
                await started.wait()
            # The first progress comes as the upstream attempt starts; give its request a
            # moment to reach the fake, which then sees the connection close.
            await anyio.sleep(0.3)
            tg.cancel_scope.cancel()
            cancel = "cancelled"
        after = await client.list_tools()
        report = {
            "version": client.protocol_version,
            "tools": [t.name for t in tools.tools],
            "progress": progress,
            "is_error": bool(result.is_error),
            "text": result.content[0].text,
            "structured": result.structured_content,
            "cancel": cancel,
            "tools_after_cancel": len(after.tools),
        }
        print(json.dumps(report))


asyncio.run(main(sys.argv[1], sys.argv[2]))
