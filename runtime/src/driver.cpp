// run_workflows(): io_context, pools, signals and run scheduling; see driver.h.
#include "dloop/runtime/driver.h"

#include <csignal>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/thread_pool.hpp>

namespace dloop::runtime {

namespace asio = boost::asio;

namespace {

struct Shared {
  std::vector<RunRequest> requests;
  std::vector<RunOutcome> outcomes;
  size_t next = 0;
  RuntimeServices services;
};

asio::awaitable<void> worker(std::shared_ptr<Shared> shared) {
  co_await asio::this_coro::throw_if_cancelled(false);
  while (shared->next < shared->requests.size() && !shared->services.cancelled->load()) {
    size_t i = shared->next++;
    auto run = execute_run(std::move(shared->requests[i]), shared->services);
    try {
      shared->outcomes[i] = co_await std::move(run);
    } catch (const std::exception& e) {
      shared->outcomes[i].status = base::internal_error(std::string("run aborted: ") + e.what());
    }
  }
}

}  // namespace

DriverResult run_workflows(std::vector<RunRequest> requests, const DriverOptions& options) {
  asio::io_context ioc;
  asio::thread_pool blocking(static_cast<size_t>(std::max(1, options.blocking_threads)));
  asio::thread_pool db(1);
  auto shared = std::make_shared<Shared>();
  shared->outcomes.resize(requests.size());
  shared->requests = std::move(requests);
  shared->services.store = options.store;
  shared->services.blocking = blocking.get_executor();
  shared->services.db = db.get_executor();
  shared->services.store_retry = options.store_retry;
  shared->services.lease_ttl_ms = options.lease_ttl_ms;
  if (options.engine) {
    shared->services.engine = options.engine;
  } else if (!options.model_path.empty()) {
    shared->services.engine = std::make_shared<EngineBridge>(options.model_path, 0, options.device);
  }

  const size_t workers = std::min(shared->requests.size(), static_cast<size_t>(std::max(1, options.parallel)));
  std::vector<std::unique_ptr<asio::cancellation_signal>> signals;
  size_t running = workers;
  DriverResult result;
  asio::signal_set sigs(ioc, SIGINT, SIGTERM);
  sigs.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    result.interrupted = true;
    shared->services.cancelled->store(true);
    for (auto& s : signals) s->emit(asio::cancellation_type::terminal);
  });
  for (size_t w = 0; w < workers; ++w) {
    signals.push_back(std::make_unique<asio::cancellation_signal>());
    asio::co_spawn(ioc, worker(shared),
                   asio::bind_cancellation_slot(signals.back()->slot(), [&](std::exception_ptr) {
                     if (--running == 0) sigs.cancel();
                   }));
  }
  if (workers == 0) sigs.cancel();
  ioc.run();
  blocking.join();
  db.join();
  result.runs = std::move(shared->outcomes);
  return result;
}

}  // namespace dloop::runtime
