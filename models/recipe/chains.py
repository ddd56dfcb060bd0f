"""Two-step chains for gen_real.py: the second call reads an id (or another value) from the first call's result.

(first tool, second tool, request templates, link, final answer or None)
- templates: the first tool's parameters as {name} (catalog.py rules, [ ... ] optional parts), the second tool's
  parameters that the user states as {b.name};
- link: second tool parameter -> path in the first result ("messages.0.id") or "=param" (the first call's argument);
- the final answer: a say template over the second call's arguments and result (None: the second tool's own).
"""
CHAINS = [
    ("search_emails", "read_email", ["find the latest email about {query} and read it to me",
                                     "open the newest mail about {query}", "what does the last email about {query} say"],
     {"message_id": "messages.0.id"}, None),
    ("search_emails", "delete_email", ["delete the most recent email about {query}", "find the email about {query} and trash it"],
     {"message_id": "messages.0.id"}, None),
    ("search_emails", "move_email", ["move the latest email about {query} to {b.folder}",
                                     "find the mail about {query} and file it under {b.folder}"],
     {"message_id": "messages.0.id"}, None),
    ("search_emails", "reply_to_email", ["reply to the latest email about {query} saying {b.body}"],
     {"message_id": "messages.0.id"}, None),
    ("list_events", "delete_event", ["cancel my first meeting {start_date}", "delete the first event on my calendar {start_date}"],
     {"event_id": "events.0.id"}, None),
    ("list_events", "update_event", ["move my first meeting {start_date} to {b.date}",
                                     "push the first event {start_date} to {b.date}"],
     {"event_id": "events.0.id"}, None),
    ("search_contacts", "delete_contact", ["remove {query} from my contacts", "find {query} in my contacts and delete them"],
     {"contact_id": "results.0.id"}, None),
    ("search_contacts", "send_email", ["look up {query} and email them with subject {b.subject} saying {b.body}",
                                       "find {query}'s email address and send them {b.body} (subject {b.subject})"],
     {"to": "results.0.email"}, None),
    ("list_issues", "get_issue", ["show me the first open issue in {owner}/{repo}", "open the top issue of {owner}/{repo}"],
     {"owner": "=owner", "repo": "=repo", "issue_number": "issues.0.number"}, None),
    ("list_issues", "add_issue_comment", ["comment {b.body} on the first issue in {owner}/{repo}"],
     {"owner": "=owner", "repo": "=repo", "issue_number": "issues.0.number"}, None),
    ("list_pull_requests", "merge_pull_request", ["merge the first open PR in {owner}/{repo}",
                                                  "find the open pull request in {owner}/{repo} and merge it"],
     {"owner": "=owner", "repo": "=repo", "pull_number": "pulls.0.number"}, None),
    ("list_pull_requests", "get_pull_request_files", ["which files does the first open PR in {owner}/{repo} touch"],
     {"owner": "=owner", "repo": "=repo", "pull_number": "pulls.0.number"}, None),
    ("list_pipelines", "retry_pipeline", ["retry the last failed pipeline of {project_id}",
                                          "find the failed pipeline in {project_id} and rerun it"],
     {"project_id": "=project_id", "pipeline_id": "pipelines.0.id"}, None),
    ("list_backups", "restore_backup", ["restore the latest backup of {database}"],
     {"backup_id": "backups.0.id"}, None),
    ("search_files", "read_file", ["find the {pattern} file under {path} and show me what's in it"],
     {"path": "results.0"}, None),
    ("search_repositories", "list_issues", ["find the top repo for {query} and list its open issues"],
     {"owner": "items.0.owner", "repo": "items.0.name"}, None),
]
