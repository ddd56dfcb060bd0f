// run_blocking(): runs a blocking function (file IO, SQLite, a KvStore call) on the context's
// thread pool and resumes the awaiting coroutine on its own executor with the result, so the
// event loop never stalls. Cancellation of the awaiting coroutine cannot interrupt a running
// system call; it sets the StopFlag, which long work (a SQLite progress handler) polls.
// The function runs on a pool thread: it must only touch what it owns or what is thread-safe.
#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <utility>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "dloop/tools/tool.h"

namespace dloop::tools {

// Set when the awaiting coroutine is cancelled; read by the blocking function.
using StopFlag = std::atomic<bool>;

// `work` is called as ToolResult(const StopFlag&) on a pool thread. An exception it throws
// becomes a `crashed` error. Requires ctx.blocking (asserts).
//
// GCC 12 miscompiles class-type temporaries inside a co_await expression (a capturing lambda, a
// std::string or Json prvalue: it relocates a moved-from object and later frees a pointer into the
// coroutine frame). So name the work first and await a named awaitable:
//   auto work = [..](const StopFlag&) { ... };
//   auto op = run_blocking(ctx, std::move(work));
//   co_return co_await std::move(op);
// run_blocking is itself not a coroutine for the same reason.
template <typename Work>
asio::awaitable<ToolResult> run_blocking(const ToolContext& ctx, Work work) {
  DLOOP_ASSERT_MSG(static_cast<bool>(ctx.blocking), "ToolContext::blocking (a thread pool) is required");
  auto stop = std::make_shared<StopFlag>(false);
  auto initiate = [pool = ctx.blocking, stop, work = std::move(work)](auto handler) mutable {
    auto slot = asio::get_associated_cancellation_slot(handler);
    if (slot.is_connected()) {
      slot.assign([stop](asio::cancellation_type) { stop->store(true); });
    }
    // A tracked executor: the io_context counts the pending completion as work, so run() does not
    // return while the pool is busy on its behalf.
    auto home = asio::prefer(asio::get_associated_executor(handler), asio::execution::outstanding_work.tracked);
    asio::post(pool, [stop, work = std::move(work), handler = std::move(handler), home]() mutable {
      ToolResult result;
      try {
        result = work(static_cast<const StopFlag&>(*stop));
      } catch (const std::exception& e) {
        result = ToolResult::failure(ToolErrorKind::kCrashed, std::string("tool threw: ") + e.what());
      } catch (...) {
        result = ToolResult::failure(ToolErrorKind::kCrashed, "tool threw an unknown exception");
      }
      // Back on the coroutine's executor: detach the cancellation handler, then resume.
      asio::post(home, [handler = std::move(handler), result = std::move(result)]() mutable {
        auto slot = asio::get_associated_cancellation_slot(handler);
        if (slot.is_connected()) slot.clear();
        std::move(handler)(std::move(result));
      });
    });
  };
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(ToolResult)>(std::move(initiate),
                                                                                asio::use_awaitable);
}

}  // namespace dloop::tools
