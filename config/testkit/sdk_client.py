"""Drives the server binary with the official MCP Python SDK and prints a JSON report.

Usage: python3 sdk_client.py <auto|modern|legacy> <server-binary>
"""

import asyncio
import json
import os
import sys

from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters


async def main(mode: str, binary: str) -> None:
    params = StdioServerParameters(command=binary, args=["--stdio"], env=dict(os.environ))
    # "auto" (the default) probes server/discover first and falls back to initialize;
    # a version string pins the modern era; "legacy" runs initialize only.
    sdk_mode = {"auto": "auto", "modern": "2026-07-28", "legacy": "legacy"}[mode]
    async with Client(params, mode=sdk_mode) as client:
        tools = await client.list_tools()
        result = await client.call_tool("answer", {"query": "Today's Tokyo weather"})
        report = {
            "version": client.protocol_version,
            "tools": [t.name for t in tools.tools],
            "is_error": bool(result.is_error),
            "text": result.content[0].text,
            "structured": result.structured_content,
        }
        print(json.dumps(report))


asyncio.run(main(sys.argv[1], sys.argv[2]))
