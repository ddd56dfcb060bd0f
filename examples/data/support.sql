-- The support database behind examples/ticket_triage.yaml (support.db is built from this file:
-- sqlite3 examples/data/support.db < examples/data/support.sql).
CREATE TABLE customers (id INTEGER PRIMARY KEY, email TEXT UNIQUE NOT NULL, name TEXT NOT NULL, plan TEXT NOT NULL);
CREATE TABLE orders (id TEXT PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), total REAL NOT NULL, status TEXT NOT NULL);
INSERT INTO customers VALUES (1, 'ada@example.com', 'Ada Lovelace', 'pro'), (2, 'alan@example.com', 'Alan Turing', 'free'),
  (3, 'grace@example.com', 'Grace Hopper', 'enterprise');
INSERT INTO orders VALUES ('A-1001', 1, 49.0, 'paid'), ('A-1002', 1, 49.0, 'refunded'), ('B-2001', 2, 0.0, 'paid'),
  ('C-3001', 3, 990.0, 'overdue'), ('C-3002', 3, 990.0, 'paid');
