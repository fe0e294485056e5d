"""The local DynamoDB for `make run` and `make test`: moto in server mode, with
every DynamoDB action run under one lock.

moto's threaded server lets two requests interleave inside one action, so a
conditional write or a transaction is not atomic against a concurrent one
(two conditional puts of the same new key can both succeed). DynamoDB
guarantees that atomicity and this product relies on it, so actions are
serialised here; network I/O stays concurrent.

moto backs up a transaction by deep-copying every table it touches, once per
item: a cost that grows with the table, seconds per write once a test run has
written a few thousand items (every change here is a transaction, with its
audit record). `_transact_write_items` backs up only the items the
transaction touches and restores those when it is cancelled: the same table
afterwards, at the cost of the transaction's own size (moto's local stream
keeps the records of a cancelled transaction's writes either way; nothing here
reads it). The item operations' answers are written as they are, not through
moto's model-driven serializer (`_written`, below). moto is pinned in
scripts/db.sh for these internals.

Usage: python scripts/moto_server.py HOST PORT
"""
import base64
import copy
import io
import json
import os
import signal
import sys
import threading

import moto.backends as moto_backends
import moto.dynamodb.models as dynamodb_models
from moto.core.utils import get_service_model
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table
from moto.dynamodb.responses import DynamoHandler
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import run_simple

# moto lists its own package folder (a listdir and an isdir per service) on
# every request to find the service a Host names; the folder does not change
# while the server runs, so it is listed once.
_MODULES = tuple(moto_backends.list_of_moto_modules())
moto_backends.list_of_moto_modules = lambda: _MODULES

_lock = threading.Lock()
_call_action = DynamoHandler.call_action


def _serialised(self):
    with _lock:
        return _call_action(self)


DynamoHandler.call_action = _serialised


class _TablesKeptInPlace:
    """moto's `copy` inside its backend module: tables are not copied (the
    wrapper below keeps what a cancelled transaction needs); anything else is."""

    @staticmethod
    def deepcopy(value, memo=None):
        return value if isinstance(value, Table) else copy.deepcopy(value, memo)


dynamodb_models.copy = _TablesKeptInPlace()
_transact = DynamoDBBackend.transact_write_items


def _touched(backend, transact_items):
    """(table, hash key, range key, a copy of the item as it is now or None)
    for each item of the transaction that names an existing table."""
    touched = []
    for entry in transact_items:
        op_type, op = next(iter(entry.items()))
        table = backend.tables.get(op.get("TableName"))
        if table is None:
            continue
        attrs = op.get("Item") if op_type == "Put" else op.get("Key")
        if not attrs or table.hash_key_attr not in attrs:
            continue
        hash_key = DynamoType(attrs[table.hash_key_attr])
        range_key = None
        if table.range_key_attr is not None:
            if table.range_key_attr not in attrs:
                continue
            range_key = DynamoType(attrs[table.range_key_attr])
        current = table.get_item(hash_key, range_key)
        touched.append((table, hash_key, range_key, copy.deepcopy(current)))
    return touched


def _transact_write_items(self, transact_items):
    touched = _touched(self, transact_items)
    try:
        return _transact(self, transact_items)
    except Exception:
        # Cancelled: every touched item as it was, last first.
        for table, hash_key, range_key, previous in reversed(touched):
            if range_key is None:
                if previous is None:
                    table.items.pop(hash_key, None)
                else:
                    table.items[hash_key] = previous
            elif previous is None:
                table.items[hash_key].pop(range_key, None)
            else:
                table.items[hash_key][range_key] = previous
        raise


DynamoDBBackend.transact_write_items = _transact_write_items


# The item operations' answers, written as they are. moto's answers go through
# a serializer driven by the service model, which visits every member of the
# model's shape for every value: for an attribute value, ten members looked up
# for the one it has. That was four fifths of moto's time on a `GetItem` of a
# seeded e-mail (a few dozen attribute values) and the larger part of every
# table call's latency in the tests and the benchmarks. An item operation's
# result is already the wire's JSON (DynamoDB's typed attribute values), but
# for the binary values (raw bytes: base64 on the wire), absent members (None:
# left out on the wire) and members the operation's answer does not have
# (moto adds the old API's `ConsumedCapacityUnits` to some), which `_written`
# treats as the serializer does.
# Errors, and every other operation (tables, streams, TTL, descriptions with
# timestamps), still go through the serializer. MOTO_CHECK_ANSWERS=1 writes
# both and logs every difference (the test suite ran clean that way).
_ITEM_ACTIONS = frozenset({
    "GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem", "BatchWriteItem",
    "TransactGetItems", "TransactWriteItems",
})
_MODEL = get_service_model("dynamodb")
# Each item operation's answer members, from the service model.
_MEMBERS = {action: frozenset(_MODEL.operation_model(action).output_shape.members) for action in _ITEM_ACTIONS}
_CHECK = os.environ.get("MOTO_CHECK_ANSWERS") == "1"
_serialized = DynamoHandler.serialized


def _wire(value):
    """A result's value as the wire has it: None members left out, bytes in base64."""
    if isinstance(value, dict):
        return {k: _wire(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_wire(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return value


def _written(self, action_result):
    result, action = action_result.result, self._get_action()
    members = _MEMBERS.get(action)
    if type(result) is not dict or members is None:
        return _serialized(self, action_result)
    headers = {"Content-Type": "application/x-amz-json-1.0"}
    headers.update(self.response_headers)
    body = json.dumps(_wire({k: v for k, v in result.items() if k in members}))
    if _CHECK:
        status, model_headers, model_body = _serialized(self, action_result)
        if (status, model_headers, json.loads(model_body)) != (200, headers, json.loads(body)):
            print(f"moto answer differs for {action}: {model_body!r} written as {body!r}; "
                  f"headers {model_headers!r} vs {headers!r}", file=sys.stderr, flush=True)
            return status, model_headers, model_body
    return 200, headers, body


DynamoHandler.serialized = _written


class _KeepAlive(MotoRequestHandler):
    """Keeps a client's connection open between calls, as DynamoDB does.

    Werkzeug's development server answers every request with
    `Connection: close` (even over HTTP/1.1), because an application that
    leaves part of a request body unread would leave it in front of the next
    request line. So here the body is read whole before the application runs
    and handed to it from memory; the connection is then positioned at the
    next request whatever the application read, and the `Connection: close`
    Werkzeug adds is dropped. A request without a length (chunked) still
    closes its connection. Without this every call paid a TCP connect and a
    fresh HTTP connection, which DynamoDB's clients never pay.
    """

    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: with Nagle's algorithm on,
    # the body waits for the client's delayed ACK (40 ms) on a kept-alive
    # connection. DynamoDB's endpoints answer at once.
    disable_nagle_algorithm = True

    def run_wsgi(self):
        length = self.headers.get("Content-Length")
        self._keep_alive = length is not None and "Transfer-Encoding" not in self.headers
        connection = self.rfile
        if self._keep_alive:
            self.rfile = io.BytesIO(connection.read(int(length)))
        try:
            return super().run_wsgi()
        finally:
            self.rfile = connection

    def send_header(self, keyword, value):
        if keyword.lower() == "connection" and value.lower() == "close" and getattr(self, "_keep_alive", False):
            return
        super().send_header(keyword, value)

    def log_request(self, *args, **kwargs):
        """No line per request (errors are still logged): a test run makes
        hundreds of thousands of calls."""


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(host, port, app, threaded=True, use_reloader=False, request_handler=_KeepAlive)


if __name__ == "__main__":
    main()
