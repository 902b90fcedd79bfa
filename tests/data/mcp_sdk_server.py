"""An MCP server on the official Python SDK (`pip install mcp`), for elroy's MCP client tests.

Run: `python mcp_sdk_server.py` (stdio) or `python mcp_sdk_server.py http PORT` (streamable HTTP
on 127.0.0.1:PORT/mcp). mcp 2.x calls the FastMCP server MCPServer; 1.x is accepted too.
"""

import os
import sys
import time

from pydantic import BaseModel

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context
    from mcp.server.fastmcp import FastMCP as MCPServer
    from mcp.server.fastmcp.exceptions import ToolError

server = MCPServer("elroy-test-server")


class Address(BaseModel):
    """Where to ship."""

    city: str
    zip: str | None = None


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@server.tool()
def fail(reason: str) -> str:
    """Always fails."""
    raise ToolError(f"refused: {reason}")


@server.tool()
def ship(to: Address, note: str | None = None) -> str:
    """Ship to an address (a nested object)."""
    return f"shipping to {to.city} ({to.zip or 'no zip'}) {note or ''}".strip()


@server.tool()
def env(name: str) -> str:
    """An environment variable of the server process."""
    return os.environ.get(name, "<unset>")


@server.tool()
def where() -> str:
    """The server's working directory."""
    return os.getcwd()


@server.tool()
def slow() -> str:
    """Answers after 30 seconds (longer than the client's call timeout in the tests)."""
    time.sleep(30)
    return "too late"


@server.tool()
def crash() -> str:
    """Exits the server in the middle of the call."""
    sys.stderr.write("crashing on purpose\n")
    sys.stderr.flush()
    os._exit(7)


@server.tool()
async def learn(ctx: Context) -> str:
    """Adds the tool `shout` and tells the client (notifications/tools/list_changed)."""

    def shout(text: str) -> str:
        """Shout the text."""
        return text.upper()

    server.add_tool(shout)
    await ctx.session.send_tool_list_changed()
    return "learned shout"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
