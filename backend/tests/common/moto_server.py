"""moto's DynamoDB server (what `moto_server -p PORT` runs), answering one
request at a time.

DynamoDB applies each conditional write and each TransactWriteItems
atomically. moto checks a condition and then writes, and undoes a cancelled
transaction by putting back copies of whole tables, without a lock: under
concurrent requests two conditional writes can both pass, and one cancelled
transaction's undo can wipe another's committed writes. Taking its requests
one at a time gives the tests DynamoDB's semantics (the console's own
concurrency, and its retries, are unchanged).

Usage: python3 moto_server.py PORT
"""

import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple

app = DomainDispatcherApplication(create_backend_app)
lock = threading.Lock()


def one_at_a_time(environ, start_response):
    with lock:
        # The whole answer is made inside the lock.
        return list(app(environ, start_response))


if __name__ == "__main__":
    run_simple("127.0.0.1", int(sys.argv[1]), one_at_a_time, threaded=True)
