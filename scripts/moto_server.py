"""The local DynamoDB for `make run` and `make test`: moto in server mode, with
every DynamoDB action run under one lock.

moto's threaded server lets two requests interleave inside one action, so a
conditional write or a transaction is not atomic against a concurrent one
(two conditional puts of the same new key can both succeed). DynamoDB
guarantees that atomicity and this product relies on it, so actions are
serialised here; network I/O stays concurrent.

Usage: python scripts/moto_server.py HOST PORT
"""
import signal
import sys
import threading

from moto.dynamodb.responses import DynamoHandler
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import run_simple

_lock = threading.Lock()
_call_action = DynamoHandler.call_action


def _serialised(self):
    with _lock:
        return _call_action(self)


DynamoHandler.call_action = _serialised


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(host, port, app, threaded=True, use_reloader=False, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main()
