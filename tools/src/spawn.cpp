// posix_spawn in a fresh process group. See spawn.h.
#include "spawn.h"

#include <signal.h>
#include <spawn.h>
#include <string.h>

extern char** environ;

namespace dloop::tools::detail {

base::Result<pid_t> spawn_in_group(const SpawnSpec& spec) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, spec.stdin_fd, 0);
  posix_spawn_file_actions_adddup2(&actions, spec.stdout_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, spec.stderr_fd, 2);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  // Own process group (so a timeout kills the whole tree), no blocked signals, default handlers.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t mask, defaults;
  sigemptyset(&mask);
  posix_spawnattr_setsigmask(&attr, &mask);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM, SIGXFSZ}) {
    sigaddset(&defaults, sig);
  }
  posix_spawnattr_setsigdefault(&attr, &defaults);

  const auto& args = *spec.argv;
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  const bool own_env = spec.env && spec.env->has_value();
  if (own_env) {
    for (const auto& e : **spec.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  char** env = own_env ? envp.data() : environ;
  pid_t pid = -1;
  bool search = args[0].find('/') == std::string::npos;
  int rc = search ? posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), env)
                  : posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), env);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    std::string why = "cannot start '" + args[0] + "': " + strerror(rc);
    if (rc == ENOENT && !spec.cwd.empty()) why += " (or no working directory " + spec.cwd.string() + ")";
    return rc == ENOENT ? base::not_found(why) : base::io_error(why);
  }
  return pid;
}

}  // namespace dloop::tools::detail
