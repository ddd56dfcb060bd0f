// offload(): runs a blocking function on another executor (the Store's worker thread, the engine
// thread) and resumes the awaiting coroutine on its own executor with the function's return value.
// The loop never blocks. Not a coroutine itself (GCC 12 mishandles class temporaries inside
// co_await, see tools/blocking.h): name the result and `co_await std::move(op)`.
#pragma once

#include <optional>
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace dloop::runtime {

namespace asio = boost::asio;

// A holder so that the completion signature's argument is default-constructible.
template <typename T>
struct Boxed {
  std::optional<T> value;
};

template <typename T, typename Work>
asio::awaitable<Boxed<T>> offload_boxed(asio::any_io_executor where, Work work) {
  auto initiate = [where, work = std::move(work)](auto handler) mutable {
    auto home = asio::prefer(asio::get_associated_executor(handler), asio::execution::outstanding_work.tracked);
    asio::post(where, [work = std::move(work), handler = std::move(handler), home]() mutable {
      Boxed<T> box;
      box.value.emplace(work());
      asio::post(home, [handler = std::move(handler), box = std::move(box)]() mutable {
        std::move(handler)(std::move(box));
      });
    });
  };
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(Boxed<T>)>(std::move(initiate),
                                                                            asio::use_awaitable);
}

}  // namespace dloop::runtime
