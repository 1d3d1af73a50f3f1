"""moto's DynamoDB server (what `moto_server -p PORT` runs), answering one
request at a time.

DynamoDB applies each conditional write and each TransactWriteItems
atomically. moto checks a condition and then writes, and undoes a cancelled
transaction by putting back copies of whole tables, without a lock: under
concurrent requests two conditional writes can both pass, and one cancelled
transaction's undo can wipe another's committed writes. Taking its requests
one at a time gives the tests DynamoDB's semantics (the console's own
concurrency, and its retries, are unchanged).

One at a time, a transaction's undo need not copy whole tables either
(moto deep-copies every table a transaction names, which grows with the
history table: 30 ms a transaction at 600 entries): here it keeps the items
the transaction names and puts them back when moto cancels it.

Usage: python3 moto_server.py PORT
"""

import copy
import sys
import threading
import types

from moto.dynamodb import models as dynamodb
from moto.dynamodb.models.table import Table
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple

app = DomainDispatcherApplication(create_backend_app)
lock = threading.Lock()

moto_transact = dynamodb.DynamoDBBackend.transact_write_items
# moto's own undo keeps whole tables: given the tables themselves, it puts
# back what is there (a no-op), and the undo below does the work.
tables_uncopied = types.SimpleNamespace(
    deepcopy=lambda x, memo=None: x if isinstance(x, Table) else copy.deepcopy(x, memo)
)


def item_key(backend, op_type, op):
    if op_type != "Put":
        return op["Key"]
    table = backend.get_table(op["TableName"])
    key = {table.hash_key_attr: op["Item"][table.hash_key_attr]}
    if table.range_key_attr is not None:
        key[table.range_key_attr] = op["Item"][table.range_key_attr]
    return key


def transact_write_items(self, transact_items):
    kept = []
    for entry in transact_items:
        try:
            op_type, op = next(iter(entry.items()))
            key = item_key(self, op_type, op)
            old = self.get_item(op["TableName"], key)
        except Exception:  # moto's own checks refuse it, before any write
            continue
        kept.append((op["TableName"], key, None if old is None else old.to_json()["Attributes"]))
    dynamodb.copy = tables_uncopied
    try:
        moto_transact(self, transact_items)
    except Exception:
        for table, key, attributes in reversed(kept):
            if attributes is None:
                if self.get_item(table, key) is not None:
                    self.delete_item(table, key)
            else:
                self.put_item(table, attributes)
        raise
    finally:
        dynamodb.copy = copy


dynamodb.DynamoDBBackend.transact_write_items = transact_write_items


def one_at_a_time(environ, start_response):
    with lock:
        # The whole answer is made inside the lock.
        return list(app(environ, start_response))


if __name__ == "__main__":
    run_simple("127.0.0.1", int(sys.argv[1]), one_at_a_time, threaded=True)
