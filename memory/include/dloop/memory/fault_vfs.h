// A fault-injection seam for tests: a SQLite VFS named "dloop_fault" that wraps the default VFS
// and makes the Nth write operation (xWrite, xTruncate or xSync on any file: database, WAL,
// journal) fail with SQLITE_IOERR or SQLITE_FULL, or makes the write lock look held by another
// process for a while (SQLITE_BUSY). Open a Store with StoreOptions::vfs =
// fault_vfs::name() and arm() it before the operation under test.
//
// What it is not: a production feature; nothing in dloop uses it outside tests.
// Thread-safety: the plan and counters are process-wide atomics; arm/disarm from one test thread
// while no other thread is writing through the VFS.
#pragma once

#include <cstdint>

namespace dloop::memory::fault_vfs {

enum class Fault {
  kIoError,   // SQLITE_IOERR_WRITE / _TRUNCATE / _FSYNC, as the operation would report it
  kDiskFull,  // SQLITE_FULL
};

// Registers the VFS once (idempotent, thread-safe) and returns its name.
const char* name();

// From now on, the `fail_at`-th write operation (1-based) fails with `fault`. With `sticky`,
// every later one fails too (a disk that stays full) until disarm().
void arm(int64_t fail_at, Fault fault, bool sticky = false);
void disarm();  // also ends a hold_write_lock()

// A lock held by someone else: from the `at`-th attempt (1-based, counted from this call) to take
// the WAL write lock (what BEGIN IMMEDIATE and every write transaction take), every attempt fails
// with SQLITE_BUSY for `hold_ms` milliseconds, as if another process held the lock that long.
// SQLite's busy handler retries within busy_timeout as it would against a real holder.
void hold_write_lock(int64_t at, int64_t hold_ms);
int64_t busy_refusals();  // attempts refused since hold_write_lock()

// Write operations seen since the last arm() or reset_count(), and how many were failed.
int64_t writes();
int64_t failures();
void reset_count();

}  // namespace dloop::memory::fault_vfs
