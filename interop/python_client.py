"""Interop test: the official Python MCP client (`mcp`, see requirements.txt)
against the running server, in its default `auto` mode (which must settle on
2026-07-28). Reads MCP_URL and MCP_TOKEN; run by scripts/interop.sh.
Exits non-zero on any failed check and prints `interop python: N passed, N failed`.

The SDK ships no tasks extension (`io.modelcontextprotocol/tasks`), but it has
the extension points one plugs into: `ClientExtension` advertises it in every
request's client capabilities, a `ResultClaim` takes the `resultType: "task"`
answer of `tools/call`, and `session.send_request` sends `tasks/get` and
`tasks/cancel` with `Mcp-Name` set from `taskId` (`Request.name_param`). The
small extension below uses exactly those, so `client.call_tool` on a long tool
returns the finished `CallToolResult` after polling."""

import asyncio
import os
from typing import Literal

import httpx2
from mcp import Client, types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import Request, RequestParams, Result

from checks import check, finish

URL = os.environ["MCP_URL"]
HEADERS = {"Authorization": f"Bearer {os.environ['MCP_TOKEN']}", "X-Workspace-Id": "ws_main"}
DELETE_ID = os.environ.get("INTEROP_PY_DELETE", "eml_broken_line")
REPROCESS_ID = os.environ.get("INTEROP_PY_REPROCESS", "eml_energy_nov")



def text_of(result):
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def confirm(context, params):
    """Auto-accepting elicitation handler: answers every form with confirm=true."""
    print(f"  elicitation: {params.message!r}")
    return types.ElicitResult(action="accept", content={"confirm": True})


TASKS = "io.modelcontextprotocol/tasks"


class CreateTaskResult(Result):
    """The flat task handle a long tool answers with (SEP-2663)."""
    result_type: Literal["task"]
    task_id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None


class DetailedTask(Result):
    """What `tasks/get` answers: the task, with its result or error once terminal."""
    result_type: str | None = None
    task_id: str
    status: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    result: dict | None = None
    error: dict | None = None


class TaskParams(RequestParams):
    task_id: str


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    name_param = "taskId"


class CancelTask(Request[TaskParams, Literal["tasks/cancel"]]):
    name_param = "taskId"


class TasksExtension(ClientExtension):
    """Polls a task to its end and returns its result as the tool's."""
    identifier = TASKS

    def __init__(self):
        self.created: list[CreateTaskResult] = []
        self.polls = 0

    def claims(self):
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self.resolve)]

    async def resolve(self, created: CreateTaskResult, ctx: ClaimContext) -> types.CallToolResult:
        self.created.append(created)
        for _ in range(60):
            task = await ctx.session.send_request(
                GetTask(method="tasks/get", params=TaskParams(task_id=created.task_id)), DetailedTask)
            self.polls += 1
            if task.status == "completed":
                return types.CallToolResult.model_validate(task.result)
            if task.status in ("failed", "cancelled"):
                raise RuntimeError(f"task {task.task_id} {task.status}: {task.error or task.status_message}")
            await asyncio.sleep(min(task.poll_interval_ms or 1000, 2000) / 1000)
        raise RuntimeError(f"task {created.task_id} did not finish")


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

            async def audit_of_the_delete():
                result = await client.call_tool("audit_list", {"target_id": DELETE_ID, "limit": 1})
                records = (result.structured_content or {}).get("data") or [{}]
                newest = records[0]
                check("audit_list: the delete's record names the tool and this client",
                      not result.is_error and newest.get("surface") == "mcp"
                      and newest.get("action") == "emails_delete" and newest.get("status") == 200
                      and (newest.get("client") or {}).get("name") == "kobana-interop-python",
                      text_of(result)[:400])

            for name, fn in [("tools/list", list_tools), ("tools/call", call_read_tool),
                             ("resources/read", read_resource), ("prompts/get", get_prompt),
                             ("completion/complete", complete), ("emails_delete", delete_confirmed),
                             ("audit_list", audit_of_the_delete)]:
                await step(name, fn)

        tasks = TasksExtension()
        transport = streamable_http_client(URL, http_client=http)
        async with Client(transport, elicitation_callback=confirm, extensions=[tasks], client_info=types.Implementation(
                name="kobana-interop-python-tasks", version="1")) as client:

            async def discover_tasks():
                extensions = (client.server_capabilities.extensions or {}) if client.server_capabilities else {}
                check("server/discover advertises the tasks extension", TASKS in extensions, extensions)

            async def reprocess_as_task():
                result = await client.call_tool("emails_reprocess", {"id": REPROCESS_ID})
                payload = result.structured_content or {}
                job = payload.get("data", {}).get("job", {})
                check("emails_reprocess became a task, polled with tasks/get to its result",
                      len(tasks.created) == 1 and tasks.created[0].status == "working" and tasks.polls >= 1
                      and not result.is_error and job.get("status") == "succeeded"
                      and job.get("result", {}).get("extracted", {}).get("amount_cents") == 48750,
                      f"created={tasks.created} polls={tasks.polls} result={text_of(result)[:300]}")
                # Cancelling a finished task is acknowledged (the request is
                # idempotent) and changes nothing: tasks/get keeps it completed.
                task_id = tasks.created[0].task_id
                try:
                    acknowledged = await client.session.send_request(
                        CancelTask(method="tasks/cancel", params=TaskParams(task_id=task_id)), Result)
                except MCPError as e:
                    acknowledged = e
                after = await client.session.send_request(
                    GetTask(method="tasks/get", params=TaskParams(task_id=task_id)), DetailedTask)
                check("tasks/cancel of a finished task is acknowledged and it stays completed",
                      not isinstance(acknowledged, MCPError) and after.status == "completed"
                      and (after.result or {}).get("isError") is not True, f"{acknowledged!r} {after.status}")

            for name, fn in [("discover tasks", discover_tasks), ("emails_reprocess as a task", reprocess_as_task)]:
                await step(name, fn)


if __name__ == "__main__":
    print(f"interop python ({URL}):")
    try:
        asyncio.run(main())
    except Exception as e:  # noqa: BLE001 - connect failure
        check("connect", False, f"{type(e).__name__}: {e!r}")
    finish("python")
