"""Interop test: the official Python MCP client (`mcp`, see requirements.txt)
against the running server, in its default `auto` mode (which must settle on
2026-07-28). Reads MCP_URL and MCP_TOKEN; run by scripts/interop.sh.
Exits non-zero on any failed check and prints `interop python: N passed, N failed`."""

import asyncio
import os
import sys

import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client

URL = os.environ["MCP_URL"]
HEADERS = {"Authorization": f"Bearer {os.environ['MCP_TOKEN']}", "X-Workspace-Id": "ws_main"}
DELETE_ID = os.environ.get("INTEROP_PY_DELETE", "eml_broken_line")

passed, failed = 0, 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"  ok   {name}")
    else:
        failed += 1
        print(f"  FAIL {name}: {detail}")


def text_of(result):
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def confirm(context, params):
    """Auto-accepting elicitation handler: answers every form with confirm=true."""
    print(f"  elicitation: {params.message!r}")
    return types.ElicitResult(action="accept", content={"confirm": True})


async def step(name, coro_fn):
    """Run one check; an exception is a failure of that check, not of the run."""
    try:
        await coro_fn()
    except Exception as e:  # noqa: BLE001 - report every SDK or server failure as a check
        check(name, False, f"{type(e).__name__}: {e}")


async def main():
    async with httpx2.AsyncClient(headers=HEADERS, timeout=30) as http:
        transport = streamable_http_client(URL, http_client=http)
        async with Client(transport, elicitation_callback=confirm, client_info=types.Implementation(
            name="kobana-interop-python", version="1")) as client:
            version = client.protocol_version
            check("auto mode negotiated 2026-07-28", version == "2026-07-28", f"got {version}")

            async def list_tools():
                names = {t.name for t in (await client.list_tools()).tools}
                check("tools/list has emails_get and emails_delete",
                      {"emails_get", "emails_delete"} <= names, sorted(names))

            async def call_read_tool():
                result = await client.call_tool("emails_get", {"id": "eml_telecom_nov"})
                text = text_of(result)
                check("tools/call emails_get", not result.is_error and '"amount_cents":15990' in text, text[:300])

            async def read_resource():
                uri = "kobana://inbox/emails/eml_telecom_nov"
                result = await client.read_resource(uri)
                text = "".join(getattr(c, "text", "") for c in result.contents)
                check("resources/read e-mail", "eml_telecom_nov" in text and str(result.contents[0].uri) == uri,
                      text[:300])

            async def get_prompt():
                result = await client.get_prompt("triage_failed_emails", {"inbox_id": "inb_bills"})
                texts = [m.content.text for m in result.messages if isinstance(m.content, types.TextContent)]
                check("prompts/get triage_failed_emails", any("inb_bills" in t for t in texts), result)

            async def complete():
                ref = types.PromptReference(name="triage_failed_emails")
                result = await client.complete(ref, {"name": "inbox_id", "value": "inb_b"})
                check("completion/complete inbox_id", "inb_bills" in result.completion.values,
                      result.completion.values)

            async def delete_confirmed():
                result = await client.call_tool("emails_delete", {"id": DELETE_ID})
                text = text_of(result)
                check(f"emails_delete {DELETE_ID} after confirmation",
                      not result.is_error and '"deleted":true' in text, f"isError={result.is_error} {text[:300]}")

            for name, fn in [("tools/list", list_tools), ("tools/call", call_read_tool),
                             ("resources/read", read_resource), ("prompts/get", get_prompt),
                             ("completion/complete", complete), ("emails_delete", delete_confirmed)]:
                await step(name, fn)


if __name__ == "__main__":
    print(f"interop python ({URL}):")
    try:
        asyncio.run(main())
    except Exception as e:  # noqa: BLE001 - connect failure
        check("connect", False, f"{type(e).__name__}: {e!r}")
    print(f"interop python: {passed} passed, {failed} failed")
    sys.exit(1 if failed or passed == 0 else 0)
