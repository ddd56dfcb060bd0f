"""The realistic tool catalog of model v2 (models/recipe/README.md): several hundred tools in many domains.

A tool is declared with T(domain, name, description, params, asks, res=None, say=None):
- params: "name*:kind:description~phrase/phrase; ..." ('*' required). The kind (gen_real.KINDS) gives the JSON
  Schema type and the value pool: city, person, email, path, date, int(1,50), num(0,100), enum(a=say a/say b|b),
  id(ORD,6), arr(kind), bool, text, ... The phrases after '~' say an optional parameter in a request ({v} is the
  value as said); a bool's phrases start with T: or F: for the value they say.
- asks: request templates; {param} is a value as said, [ ... ] a part kept only when every parameter in it is set.
- res(g, args) -> the tool's JSON result (g: gen_real.Values); say: the final answer, {key} from args or the result
  (top-level keys; {a.b} and {a.0.b} walk into it).
HELD_OUT_DOMAINS and HELD_OUT_TOOLS are never used in training conversations (gen_real.py --split heldout).
"""

TOOLS = []


def T(domain, name, description, params="", asks=(), res=None, say=None, kind=None):
    TOOLS.append({"domain": domain, "name": name, "description": description, "params": params,
                  "asks": list(asks), "res": res, "say": say})


# Whole domains and single tools only the held-out split uses.
HELD_OUT_DOMAINS = ["sports", "recipes", "hr", "real_estate"]
HELD_OUT_TOOLS = ["get_forecast_hourly", "reply_to_email", "find_free_slots", "git_blame", "get_pull_request_files",
                  "convert_volume", "get_crypto_history", "set_timer_named", "move_task", "search_notes_by_tag",
                  "set_scene", "get_transit_directions", "get_hotel_reviews", "request_exchange", "merge_contacts",
                  "escalate_ticket", "scale_deployment", "pin_message", "get_page_history", "explain_query",
                  "get_air_quality", "list_directory_with_sizes"]


# ------------------------------------------------------------------------------------------------ weather
T("weather", "get_current_weather", "Get the current weather in a given location.",
  "location*:city:The city, e.g. San Francisco; unit:enum(celsius=in celsius/in °C/in metric|fahrenheit=in fahrenheit/in °F):Temperature unit~{v}",
  ["what's the weather in {location}[ {unit}]", "weather {location}", "is it raining in {location} right now",
   "how hot is it in {location}[ {unit}]", "current conditions in {location}", "tell me the weather for {location}",
   "do I need a jacket in {location} today", "temperature in {location}[ {unit}]"],
  res=lambda g, a: {"location": a["location"], "temperature": g.int(-5, 34), "unit": a.get("unit", "celsius"),
                    "conditions": g.pick(["sunny", "partly cloudy", "cloudy", "light rain", "showers", "clear"]),
                    "humidity": g.int(25, 95), "wind_kph": g.int(0, 40)},
  say="It's {temperature}° and {conditions} in {location}.")
T("weather", "get_forecast", "Get the daily weather forecast for a location for the next days.",
  "location*:city:City name; days:int(1,14):Number of days to forecast, 1-14~for {v} days/{v}-day/next {v} days; unit:enum(celsius=in celsius|fahrenheit=in fahrenheit):Temperature unit~{v}",
  ["forecast for {location}[ for the next {days} days]", "what will the weather be like in {location}[ over the next {days} days]",
   "give me the [{days}-day ]forecast for {location}", "will it rain in {location} this week", "{location} forecast"],
  res=lambda g, a: {"location": a["location"], "days": [{"date": g.date_offset(i), "high": g.int(10, 30),
                    "low": g.int(-2, 12), "conditions": g.pick(["sunny", "rain", "cloudy", "storms"])}
                    for i in range(min(a.get("days", 3), 3))]},
  say="In {location}: {days.0.conditions} with a high of {days.0.high}°, then {days.1.conditions}.")
T("weather", "get_forecast_hourly", "Hourly forecast for the next hours at a location.",
  "location*:city:City name; hours:int(1,48):How many hours ahead~for the next {v} hours",
  ["hourly forecast for {location}[ for the next {hours} hours]", "will it rain in {location} in the next few hours",
   "hour by hour weather in {location}"],
  res=lambda g, a: {"location": a["location"], "hours": [{"time": "%02d:00" % h, "temp": g.int(5, 25),
                    "precip_prob": g.int(0, 90)} for h in (14, 15, 16)]},
  say="In {location} it will be around {hours.0.temp}° with a {hours.0.precip_prob}% chance of rain at {hours.0.time}.")
T("weather", "get_weather_alerts", "List active severe weather alerts for a US state or region.",
  "area*:city:City or region name",
  ["any weather alerts for {area}", "are there storm warnings in {area}", "check severe weather alerts in {area}"],
  res=lambda g, a: {"area": a["area"], "alerts": g.pick([[], [{"event": "Wind Advisory", "severity": "moderate",
                    "until": g.date_offset(1) + "T18:00"}]])},
  say="There are {alerts|no active alerts|active alerts} for {area}.")
T("weather", "get_air_quality", "Current air quality index (AQI) and main pollutant for a city.",
  "city*:city:City name",
  ["what's the air quality in {city}", "AQI in {city}", "is the air clean in {city} today"],
  res=lambda g, a: {"city": a["city"], "aqi": g.int(10, 180), "pollutant": g.pick(["pm2.5", "ozone", "no2"])},
  say="The AQI in {city} is {aqi}, mainly from {pollutant}.")
T("weather", "get_uv_index", "UV index for a location today.",
  "location*:city:City name",
  ["what's the UV index in {location}", "do I need sunscreen in {location} today", "UV in {location}"],
  res=lambda g, a: {"location": a["location"], "uv_index": g.int(0, 11)},
  say="The UV index in {location} is {uv_index} today.")
T("weather", "get_sunrise_sunset", "Sunrise and sunset times for a location and date.",
  "location*:city:City name; date:date:Date, YYYY-MM-DD (default today)~{v}",
  ["when is sunset in {location}[ {date}]", "sunrise time in {location}[ {date}]", "what time does the sun set in {location}[ {date}]"],
  res=lambda g, a: {"location": a["location"], "sunrise": "06:%02d" % g.int(10, 59), "sunset": "19:%02d" % g.int(10, 59)},
  say="In {location} the sun rises at {sunrise} and sets at {sunset}.")

# ------------------------------------------------------------------------------------------------ email
T("email", "send_email", "Send an email to one or more recipients.",
  "to*:arr(email):Recipient email addresses; subject*:subject:Subject line; body*:body:Plain-text body; cc:arr(email):CC recipients~cc {v}/copy {v}",
  ["send an email to {to} with subject {subject} saying {body}[ and cc {cc}]",
   "email {to}: subject {subject}, body {body}", "write to {to} about {subject}: {body}",
   "please send {to} a mail titled {subject} that says {body}[, cc {cc}]",
   "shoot an email over to {to}, subject {subject}, message {body}"],
  res=lambda g, a: {"id": g.ident("msg_", 8), "status": "sent"},
  say="Your email \"{subject}\" was sent.")
T("email", "search_emails", "Search the mailbox with a query; returns matching messages, newest first.",
  "query*:word:Search text (sender, subject words); limit:int(1,50):Maximum messages to return~the last {v}/{v} results; unread_only:bool:Only unread messages~T:unread only/T:only the unread ones",
  ["find emails about {query}[, {unread_only}]", "search my inbox for {query}", "any mail from {query}?",
   "show me [{limit} ]emails mentioning {query}", "look for messages about {query}[ {limit}]"],
  res=lambda g, a: {"messages": [{"id": g.ident("msg_", 8), "from": g.email(), "subject": g.subject(),
                    "date": g.date_offset(-g.int(0, 9))} for _ in range(g.int(1, 3))]},
  say="I found {messages|no emails|emails}; the newest is \"{messages.0.subject}\" from {messages.0.from}.")
T("email", "read_email", "Read one email by its message id.",
  "message_id*:id(msg_,8):The message id",
  ["open email {message_id}", "read message {message_id}", "what does email {message_id} say"],
  res=lambda g, a: {"id": a["message_id"], "from": g.email(), "subject": g.subject(), "body": g.body()},
  say="It's from {from}: \"{body}\"")
T("email", "reply_to_email", "Reply to an email thread.",
  "message_id*:id(msg_,8):Id of the message to reply to; body*:body:Reply text; reply_all:bool:Reply to all recipients~T:reply all/T:to everyone",
  ["reply to {message_id} with {body}", "answer email {message_id}: {body}[ ({reply_all})]"],
  res=lambda g, a: {"status": "sent", "id": g.ident("msg_", 8)}, say="Reply sent.")
T("email", "list_unread_emails", "List unread emails in the inbox.",
  "limit:int(1,50):Maximum number of emails~the last {v}/{v} of them",
  ["do I have unread emails", "show my unread mail", "any new emails?", "list unread messages[, {limit}]"],
  res=lambda g, a: {"count": g.int(0, 12), "messages": [{"id": g.ident("msg_", 8), "from": g.email(), "subject": g.subject()}]},
  say="You have {count} unread emails; the latest is \"{messages.0.subject}\".")
T("email", "move_email", "Move an email to a folder.",
  "message_id*:id(msg_,8):Message id; folder*:enum(Archive|Spam|Trash|Important|Receipts):Destination folder",
  ["move {message_id} to {folder}", "put email {message_id} in {folder}", "file message {message_id} under {folder}"],
  say="Moved it to {folder}.")
T("email", "create_draft", "Create an email draft without sending it.",
  "to*:arr(email):Recipients; subject*:subject:Subject; body:body:Draft body~saying {v}",
  ["draft an email to {to} with subject {subject}[ saying {body}]", "start a draft for {to} titled {subject}"],
  res=lambda g, a: {"draft_id": g.ident("dr_", 6)}, say="Draft saved (id {draft_id}).")
T("email", "delete_email", "Delete an email by id.", "message_id*:id(msg_,8):Message id",
  ["delete email {message_id}", "trash message {message_id}", "get rid of {message_id}"], say="Deleted.")

# ------------------------------------------------------------------------------------------------ calendar
T("calendar", "create_event", "Create a calendar event.",
  "title*:event:Event title; date*:date:Date, YYYY-MM-DD; start_time*:time:Start time, HH:MM (24h); duration_minutes:int(15,240):Length in minutes~for {v} minutes; attendees:arr(email):Guest emails~with {v}/invite {v}; location:place:Where~at {v}",
  ["schedule {title} {date} at {start_time}[ for {duration_minutes} minutes][ with {attendees}]",
   "add {title} to my calendar {date} at {start_time}[ {location}]", "create an event {title} on {date}, {start_time}",
   "put {title} in the calendar for {date} {start_time}[, invite {attendees}]",
   "book {title} {date} {start_time}[ at {location}]", "{date} at {start_time}: {title}"],
  res=lambda g, a: {"event_id": g.ident("evt_", 6), "status": "confirmed"},
  say="{title} is on your calendar for {date} at {start_time}.")
T("calendar", "list_events", "List calendar events between two dates.",
  "start_date*:date:First day, YYYY-MM-DD; end_date:date:Last day (default: start_date)~until {v}",
  ["what's on my calendar {start_date}", "show my events {start_date}[ until {end_date}]", "am I free {start_date}",
   "what meetings do I have {start_date}"],
  res=lambda g, a: {"events": [{"id": g.ident("evt_", 6), "title": g.event(), "start": a["start_date"] + "T%02d:00" % g.int(8, 17)}
                    for _ in range(g.int(1, 3))]},
  say="You have {events.0.title} at {events.0.start}.")
T("calendar", "delete_event", "Delete a calendar event by id.", "event_id*:id(evt_,6):Event id",
  ["cancel event {event_id}", "delete {event_id} from my calendar", "remove calendar entry {event_id}"], say="The event was removed.")
T("calendar", "update_event", "Change the time or title of an event.",
  "event_id*:id(evt_,6):Event id; date:date:New date~to {v}/move it to {v}; start_time:time:New start time~at {v}; title:event:New title~rename it to {v}",
  ["move {event_id} to {date}[ at {start_time}]", "reschedule event {event_id} to {date}", "change {event_id} to start at {start_time}"],
  say="Event updated.")
T("calendar", "find_free_slots", "Find free time slots for a meeting among attendees.",
  "attendees*:arr(email):People who must attend; date*:date:Day to search; duration_minutes*:int(15,180):Meeting length in minutes",
  ["when are {attendees} free {date} for {duration_minutes} minutes", "find a {duration_minutes} minute slot {date} with {attendees}"],
  res=lambda g, a: {"slots": ["%02d:00" % g.int(9, 11), "%02d:30" % g.int(13, 16)]},
  say="Everyone is free at {slots.0} or {slots.1}.")
T("calendar", "respond_to_invite", "Accept, decline or tentatively accept a meeting invitation.",
  "event_id*:id(evt_,6):Event id; response*:enum(accepted=accept/yes|declined=decline/no|tentative=maybe/tentative):Your answer",
  ["{response} the invite {event_id}", "reply {response} to {event_id}"], say="Done, you {response} it.")

# ------------------------------------------------------------------------------------------------ contacts
T("contacts", "search_contacts", "Search the address book by name, email or company.",
  "query*:person:Name, email or company to search for; limit:int(1,20):Maximum results~top {v}",
  ["find {query} in my contacts", "look up {query}", "what's {query}'s email", "do I have a contact named {query}",
   "search contacts for {query}", "phone number of {query}?"],
  res=lambda g, a: {"results": [{"id": g.ident("c_", 5), "name": a["query"], "email": g.email(a["query"]), "phone": g.phone()}]},
  say="{results.0.name}: {results.0.email}, {results.0.phone}.")
T("contacts", "create_contact", "Add a new contact to the address book.",
  "name*:person:Full name; email:email:Email address~email {v}/, {v}; phone:phone:Phone number~phone {v}/number {v}; company:company:Company~at {v}/works at {v}",
  ["add {name} to my contacts[, email {email}][, phone {phone}]", "save a contact {name}[ {company}][ {email}]",
   "new contact: {name}[, {phone}]", "create contact {name}[ with email {email}]"],
  res=lambda g, a: {"id": g.ident("c_", 5)}, say="{name} was added to your contacts.")
T("contacts", "update_contact", "Update fields of an existing contact.",
  "contact_id*:id(c_,5):Contact id; email:email:New email~email to {v}; phone:phone:New phone~phone to {v}",
  ["update contact {contact_id}[ with email {email}][, phone {phone}]", "change {contact_id}'s number to {phone}"], say="Contact updated.")
T("contacts", "delete_contact", "Delete a contact.", "contact_id*:id(c_,5):Contact id",
  ["delete contact {contact_id}", "remove {contact_id} from my address book"], say="Contact deleted.")
T("contacts", "merge_contacts", "Merge two duplicate contacts into one.",
  "primary_id*:id(c_,5):Contact to keep; duplicate_id*:id(c_,5):Contact merged into it and removed",
  ["merge {duplicate_id} into {primary_id}", "combine contacts {primary_id} and {duplicate_id}, keep {primary_id}"],
  say="Merged; {primary_id} is kept.")
T("contacts", "list_contact_groups", "List the groups in the address book.", "",
  ["what contact groups do I have", "list my contact groups"],
  res=lambda g, a: {"groups": ["Family", "Work", "Book club"]}, say="Your groups are {groups.0}, {groups.1} and {groups.2}.")

# ------------------------------------------------------------------------------------------------ databases
T("database", "run_sql_query", "Execute a read-only SQL query against a database and return the rows.",
  "database*:database:Database name; query*:sql:SQL SELECT statement; limit:int(1,1000):Row limit~at most {v} rows",
  ["run {query} on {database}", "in the {database} db: {query}", "query {database} with {query}[, {limit}]",
   "execute this SQL on {database}: {query}", "{query} -- against {database} please"],
  res=lambda g, a: {"columns": ["count"], "rows": [[g.int(1, 900)]], "row_count": 1},
  say="The query returned {rows.0.0}.")
T("database", "list_tables", "List the tables in a database.", "database*:database:Database name",
  ["what tables are in {database}", "list tables of the {database} database", "show tables in {database}"],
  res=lambda g, a: {"tables": ["customers", "orders", "products"]}, say="{database} has {tables.0}, {tables.1} and {tables.2}.")
T("database", "describe_table", "Show the columns and types of a table.",
  "database*:database:Database name; table*:table:Table name",
  ["describe {table} in {database}", "what columns does {table} have in {database}", "schema of {database}.{table}"],
  res=lambda g, a: {"table": a["table"], "columns": [{"name": "id", "type": "INTEGER"}, {"name": "created_at", "type": "TIMESTAMP"}]},
  say="{table} has columns {columns.0.name} ({columns.0.type}) and {columns.1.name} ({columns.1.type}).")
T("database", "explain_query", "Show the query plan of a SQL statement.",
  "database*:database:Database name; query*:sql:SQL statement",
  ["explain {query} on {database}", "why is {query} slow in {database}? show the plan"],
  res=lambda g, a: {"plan": "SEQ SCAN on table, est. rows %d" % g.int(100, 90000)}, say="The plan is: {plan}.")
T("database", "sqlite_query", "Runs a read-only SQL query on the SQLite database. Returns {columns, rows}.",
  "sql*:sql:one SQL statement; use ? for values; params:arr(word):values for the ? placeholders, in order",
  ["run {sql}", "query the database: {sql}", "execute {sql}", "how many rows does this give: {sql}"],
  res=lambda g, a: {"columns": ["n"], "rows": [[g.int(0, 500)]]}, say="The result is {rows.0.0}.")
T("database", "create_backup", "Start a backup of a database.",
  "database*:database:Database name; compress:bool:Compress the dump~T:compressed/T:with compression",
  ["back up {database}[ {compress}]", "start a backup of the {database} database"],
  res=lambda g, a: {"backup_id": g.ident("bkp-", 6), "status": "running"}, say="Backup {backup_id} of {database} started.")
T("database", "list_backups", "List recent backups of a database.", "database*:database:Database name",
  ["list backups of {database}", "when was {database} last backed up"],
  res=lambda g, a: {"backups": [{"id": g.ident("bkp-", 6), "created": g.date_offset(-1), "size_mb": g.int(50, 9000)}]},
  say="The latest backup of {database} is {backups.0.id} from {backups.0.created}.")

# ------------------------------------------------------------------------------------------------ github
T("github", "create_issue", "Create a new issue in a GitHub repository.",
  "owner*:word:Repository owner; repo*:word:Repository name; title*:issue_title:Issue title; body:body:Issue body~saying {v}/with the text {v}; labels:arr(label):Labels~label it {v}/tagged {v}",
  ["open an issue in {owner}/{repo} titled {title}[ {labels}]", "create a GitHub issue on {owner}/{repo}: {title}",
   "file a bug in {owner}/{repo} called {title}[ {body}]", "new issue for {owner}/{repo}, title {title}"],
  res=lambda g, a: {"number": g.int(10, 4000), "url": "https://github.com/%s/%s/issues/%d" % (a["owner"], a["repo"], 1)},
  say="Created issue #{number} in {owner}/{repo}.")
T("github", "list_issues", "List issues in a GitHub repository with optional filters.",
  "owner*:word:Repository owner; repo*:word:Repository name; state:enum(open|closed|all):Issue state~{v}; labels:arr(label):Filter by labels~labelled {v}; per_page:int(1,100):Results per page~{v} per page",
  ["list {state} issues in {owner}/{repo}", "show issues on {owner}/{repo}[ {labels}]", "what issues are open in {owner}/{repo}"],
  res=lambda g, a: {"issues": [{"number": g.int(1, 900), "title": g.issue_title(), "state": "open"} for _ in range(2)]},
  say="Top issues: #{issues.0.number} \"{issues.0.title}\" and #{issues.1.number} \"{issues.1.title}\".")
T("github", "get_issue", "Get the details of a GitHub issue.",
  "owner*:word:Repository owner; repo*:word:Repository name; issue_number*:int(1,5000):Issue number",
  ["show issue {issue_number} in {owner}/{repo}", "what's #{issue_number} on {owner}/{repo} about", "get {owner}/{repo} issue {issue_number}"],
  res=lambda g, a: {"number": a["issue_number"], "title": g.issue_title(), "state": g.pick(["open", "closed"]), "comments": g.int(0, 30)},
  say="#{number} is \"{title}\" ({state}, {comments} comments).")
T("github", "add_issue_comment", "Add a comment to an issue or pull request.",
  "owner*:word:Repository owner; repo*:word:Repository name; issue_number*:int(1,5000):Issue number; body*:body:Comment text",
  ["comment {body} on {owner}/{repo}#{issue_number}", "reply on issue {issue_number} in {owner}/{repo}: {body}"],
  say="Comment posted on #{issue_number}.")
T("github", "update_issue", "Update an issue: state, title, labels or assignees.",
  "owner*:word:Repository owner; repo*:word:Repository name; issue_number*:int(1,5000):Issue number; state:enum(open|closed):New state~mark it {v}; assignees:arr(word):Usernames to assign~assign {v}",
  ["close issue {issue_number} in {owner}/{repo}", "assign {owner}/{repo}#{issue_number} to {assignees}", "set #{issue_number} on {owner}/{repo} to {state}"],
  say="Issue #{issue_number} updated.")
T("github", "create_pull_request", "Create a pull request.",
  "owner*:word:Repository owner; repo*:word:Repository name; title*:commit:PR title; head*:branch:Branch with the changes; base*:branch:Branch to merge into; draft:bool:Open as draft~T:as a draft",
  ["open a PR in {owner}/{repo} from {head} into {base} titled {title}", "create a pull request {head} -> {base} on {owner}/{repo}: {title}[ {draft}]"],
  res=lambda g, a: {"number": g.int(10, 3000), "state": "open"}, say="Opened PR #{number}.")
T("github", "list_pull_requests", "List pull requests of a repository.",
  "owner*:word:Repository owner; repo*:word:Repository name; state:enum(open|closed|all):State filter~{v}",
  ["list {state} PRs in {owner}/{repo}", "what pull requests are open on {owner}/{repo}"],
  res=lambda g, a: {"pulls": [{"number": g.int(10, 3000), "title": g.commit(), "user": g.first().lower()}]},
  say="PR #{pulls.0.number} \"{pulls.0.title}\" by {pulls.0.user}.")
T("github", "merge_pull_request", "Merge a pull request.",
  "owner*:word:Repository owner; repo*:word:Repository name; pull_number*:int(1,5000):PR number; merge_method:enum(merge|squash|rebase):Merge method~with {v}/{v} it",
  ["merge PR {pull_number} in {owner}/{repo}[ {merge_method}]", "squash and merge {owner}/{repo}#{pull_number}"],
  res=lambda g, a: {"merged": True, "sha": g.hexid(7)}, say="PR #{pull_number} merged ({sha}).")
T("github", "get_pull_request_files", "List the files changed in a pull request.",
  "owner*:word:Repository owner; repo*:word:Repository name; pull_number*:int(1,5000):PR number",
  ["which files does PR {pull_number} in {owner}/{repo} change", "files changed in {owner}/{repo}#{pull_number}"],
  res=lambda g, a: {"files": [{"filename": g.path(False), "additions": g.int(1, 80), "deletions": g.int(0, 30)}]},
  say="It changes {files.0.filename} (+{files.0.additions}/-{files.0.deletions}).")
T("github", "search_repositories", "Search GitHub repositories.",
  "query*:word:Search keywords; sort:enum(stars|forks|updated):Sort field~sorted by {v}",
  ["find GitHub repos about {query}[ {sort}]", "search repositories for {query}"],
  res=lambda g, a: {"items": [{"full_name": g.repo(), "stars": g.int(100, 90000)}]},
  say="Top result: {items.0.full_name} with {items.0.stars} stars.")
T("github", "get_file_contents", "Get the contents of a file in a GitHub repository.",
  "owner*:word:Repository owner; repo*:word:Repository name; path*:path_rel:File path; branch:branch:Branch~on {v}/from {v}",
  ["show {path} from {owner}/{repo}[ {branch}]", "get the contents of {path} in {owner}/{repo}"],
  res=lambda g, a: {"path": a["path"], "size": g.int(100, 9000), "content": "# Project\nSee docs."},
  say="{path} is {size} bytes; it starts with \"# Project\".")
T("github", "create_branch", "Create a new branch in a repository.",
  "owner*:word:Repository owner; repo*:word:Repository name; branch*:branch:New branch name; from_branch:branch:Source branch~from {v}/off {v}",
  ["create branch {branch} in {owner}/{repo}[ {from_branch}]", "make a new branch {branch} on {owner}/{repo}"],
  say="Branch {branch} created.")
T("gitlab", "create_merge_request", "Create a merge request in a GitLab project.",
  "project_id*:word:Project path, e.g. group/project; source_branch*:branch:Source branch; target_branch*:branch:Target branch; title*:commit:Title",
  ["open a merge request in {project_id} from {source_branch} to {target_branch}: {title}", "create an MR {source_branch} into {target_branch} on {project_id} titled {title}"],
  res=lambda g, a: {"iid": g.int(1, 900), "state": "opened"}, say="Merge request !{iid} is open.")
T("gitlab", "list_pipelines", "List CI pipelines of a GitLab project.",
  "project_id*:word:Project path; status:enum(running|success|failed|canceled):Filter by status~{v}",
  ["show {status} pipelines in {project_id}", "list pipelines for {project_id}"],
  res=lambda g, a: {"pipelines": [{"id": g.int(10000, 99999), "status": a.get("status", "success"), "ref": "main"}]},
  say="Pipeline {pipelines.0.id} on {pipelines.0.ref}: {pipelines.0.status}.")
T("gitlab", "retry_pipeline", "Retry a failed pipeline.", "project_id*:word:Project path; pipeline_id*:int(10000,99999):Pipeline id",
  ["retry pipeline {pipeline_id} in {project_id}", "rerun {project_id} pipeline {pipeline_id}"], say="Pipeline {pipeline_id} restarted.")

# ------------------------------------------------------------------------------------------------ filesystem (MCP reference server)
T("filesystem", "read_file", "Read the complete contents of a file from the file system. Handles various text encodings. Only works within allowed directories.",
  "path*:path:Path of the file",
  ["read {path}", "show me the contents of {path}", "what's in {path}", "open {path}", "cat {path}"],
  res=lambda g, a: {"content": g.file_text(a["path"])}, say="{path} contains: {content}")
T("filesystem", "read_multiple_files", "Read the contents of multiple files simultaneously. More efficient than reading files one by one.",
  "paths*:arr(path):Paths of the files",
  ["read {paths}", "show me {paths}", "open these files: {paths}"],
  res=lambda g, a: {"files": [{"path": p, "content": g.file_text(p)} for p in a["paths"]]},
  say="Read {files.0.path} and the others.")
T("filesystem", "write_file", "Create a new file or completely overwrite an existing file with new content.",
  "path*:path:Where to write; content*:text:Text to write",
  ["write {content} to {path}", "save {content} in {path}", "create {path} with the content {content}", "put {content} into {path}"],
  res=lambda g, a: {"ok": True}, say="Wrote {path}.")
T("filesystem", "edit_file", "Make line-based edits to a text file. Each edit replaces exact line sequences with new content.",
  "path*:path:File to edit; edits*:edits:List of {oldText, newText} replacements; dryRun:bool:Preview changes as a diff~T:as a dry run/T:just preview it",
  ["in {path} replace {edits}", "edit {path}: change {edits}[ ({dryRun})]"],
  res=lambda g, a: {"diff": "@@ -1 +1 @@"}, say="Edited {path}.")
T("filesystem", "create_directory", "Create a new directory or ensure a directory exists, including nested directories.",
  "path*:dir:Directory to create",
  ["create a folder {path}", "make directory {path}", "mkdir {path}", "create {path} if it doesn't exist"], say="Created {path}.")
T("filesystem", "list_directory", "Get a detailed listing of all files and directories in a specified path.",
  "path*:dir:Directory to list",
  ["list {path}", "what files are in {path}", "ls {path}", "show the contents of the {path} folder"],
  res=lambda g, a: {"entries": g.listing()}, say="{path} contains {entries.0} and {entries.1}.")
T("filesystem", "list_directory_with_sizes", "List files and directories in a path with their sizes.",
  "path*:dir:Directory to list; sortBy:enum(name|size):Sort entries by name or size~sorted by {v}",
  ["list {path} with sizes[ {sortBy}]", "how big are the files in {path}"],
  res=lambda g, a: {"entries": [{"name": n, "size": g.int(200, 90000)} for n in g.listing()]},
  say="The largest is {entries.0.name} ({entries.0.size} bytes).")
T("filesystem", "directory_tree", "Get a recursive tree view of files and directories as a JSON structure.",
  "path*:dir:Root directory",
  ["show the tree of {path}", "directory tree for {path}", "give me the folder structure under {path}"],
  res=lambda g, a: {"name": a["path"], "type": "directory", "children": [{"name": n, "type": "file"} for n in g.listing()]},
  say="{path} holds {children.0.name} and {children.1.name}.")
T("filesystem", "move_file", "Move or rename files and directories.",
  "source*:path:Current path; destination*:path:New path",
  ["move {source} to {destination}", "rename {source} to {destination}", "mv {source} {destination}"], say="Moved {source} to {destination}.")
T("filesystem", "search_files", "Recursively search for files and directories matching a pattern.",
  "path*:dir:Where to start; pattern*:glob:Name pattern; excludePatterns:arr(glob):Patterns to skip~excluding {v}",
  ["find {pattern} files in {path}", "search {path} for {pattern}[ {excludePatterns}]", "look for files named {pattern} under {path}"],
  res=lambda g, a: {"matches": [a["path"] + "/" + g.pick(["notes.txt", "report.md", "data.csv"])]},
  say="Found {matches.0}.")
T("filesystem", "get_file_info", "Retrieve detailed metadata about a file or directory: size, times, type, permissions.",
  "path*:path:File or directory",
  ["how big is {path}", "when was {path} last modified", "file info for {path}", "stat {path}"],
  res=lambda g, a: {"size": g.int(100, 2000000), "modified": g.date_offset(-g.int(1, 90)) + "T10:12:00Z", "type": "file", "permissions": "rw-r--r--"},
  say="{path} is {size} bytes, last modified {modified}.")
T("filesystem", "list_allowed_directories", "Returns the list of directories that this server is allowed to access.", "",
  ["which directories can you access", "what folders am I allowed to use", "list allowed directories"],
  res=lambda g, a: {"directories": ["/home/user/projects", "/tmp"]}, say="I can access {directories.0} and {directories.1}.")
# dloop's own built-in tools (tools/builtin), as agents see them
T("builtin", "file_list", "Lists a directory in the workspace. Returns {path, entries: [{name, type, size}]}.",
  "path:dir_rel:directory relative to the workspace; default \".\"~in {v}/of {v}; recursive:bool:include subdirectories~T:recursively/T:including subfolders",
  ["list the files[ in {path}]", "what's in the workspace", "ls[ {path}][ {recursive}]", "show me the files[ in {path}]"],
  res=lambda g, a: {"path": a.get("path", "."), "entries": [{"name": n, "type": "file", "size": g.int(20, 9000)} for n in g.listing()]},
  say="There are {entries.0.name} and {entries.1.name}.")
T("builtin", "file_read", "Reads a UTF-8 text file in the workspace. Returns {path, size, offset, content}.",
  "path*:path_rel:file path relative to the workspace; offset:int(0,10000):byte offset to start at~from byte {v}; length:int(1,100000):bytes to read at most~at most {v} bytes",
  ["read {path}", "open {path}[ {length}]", "what does {path} say", "show {path}"],
  res=lambda g, a: {"path": a["path"], "size": 120, "offset": 0, "content": g.file_text(a["path"])}, say="{path} says: {content}")
T("builtin", "file_write", "Writes a text file in the workspace (replacing it, or appending with append: true).",
  "path*:path_rel:file path relative to the workspace; content*:text:the text to write; append:bool:append instead of replacing~T:append/T:at the end",
  ["write {content} to {path}", "save {content} as {path}", "[{append} ]{content} to {path}", "add the line {content} to {path}[ ({append})]"],
  res=lambda g, a: {"path": a["path"], "bytes": len(a["content"])}, say="Saved {path}.")
T("builtin", "calculator", "Evaluates an arithmetic expression: + - * / % ^, parentheses, sqrt abs min max round floor ceil.",
  "expression*:expr:the expression, e.g. \"2 * (3 + 4) ^ 2\"",
  ["what is {expression}", "calculate {expression}", "compute {expression}", "{expression} = ?", "how much is {expression}"],
  res=lambda g, a: {"result": g.eval(a["expression"])}, say="{expression} = {result}.")
T("builtin", "retrieve", "Searches the indexed documents. Returns {query, results: [{citation, path, best_line, best_text}]}.",
  "query*:doc_question:search text; k:int(1,50):how many passages~top {v}/{v} passages",
  ["search the docs for {query}", "find in the documentation: {query}", "what do the docs say about {query}[, {k}]"],
  res=lambda g, a: {"query": a["query"], "results": [g.passage()]},
  say="{results.0.best_text} ({results.0.path}:{results.0.best_line})")
T("builtin", "memory_put", "Saves a JSON value under a key so that later steps and runs of this workflow can read it.",
  "key*:key:the key; value*:text:any JSON value",
  ["remember {value} as {key}", "save {value} under {key}", "store {key} = {value}"], res=lambda g, a: {"ok": True}, say="Saved under {key}.")
T("builtin", "memory_get", "Reads a value saved earlier with memory_put. Returns {key, found, value}.",
  "key*:key:the key",
  ["what did I save under {key}", "recall {key}", "get the value of {key}"],
  res=lambda g, a: {"key": a["key"], "found": True, "value": g.note()}, say="{key} is \"{value}\".")
T("builtin", "http_request", "Sends an HTTP request to an allowed host. Returns {status, headers, body}.",
  "url*:url:http://host[:port]/path?query; method:enum(GET|POST|PUT|DELETE):HTTP method~as a {v}/with {v}; body:text:request body~with body {v}",
  ["fetch {url}", "GET {url}", "send a {method} request to {url}[ {body}]", "call {url}"],
  res=lambda g, a: {"status": 200, "body": "{\"ok\": true}"}, say="{url} answered with status {status}.")
T("builtin", "shell", "Runs a program with arguments (no shell syntax). Returns {exit_code, stdout, stderr}.",
  "argv*:argv:program and arguments, e.g. [\"ls\", \"-l\"]; stdin:text:text for the program's standard input~with input {v}",
  ["run {argv}", "execute {argv}", "run the command {argv}"],
  res=lambda g, a: {"exit_code": 0, "stdout": "ok\n", "stderr": ""}, say="It exited with code {exit_code} and printed \"ok\".")

# ------------------------------------------------------------------------------------------------ memory (MCP knowledge graph)
T("memory", "create_entities", "Create multiple new entities in the knowledge graph.",
  "entities*:entities:Entities to create, each {name, entityType, observations}",
  ["remember that {entities}", "add {entities} to the knowledge graph", "create an entity for {entities}"],
  res=lambda g, a: a["entities"], say="Saved {0.name} in memory.")
T("memory", "create_relations", "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice.",
  "relations*:relations:Relations, each {from, to, relationType}",
  ["record that {relations}", "add the relation {relations}", "note in memory: {relations}"],
  res=lambda g, a: a["relations"], say="Relation saved.")
T("memory", "add_observations", "Add new observations to existing entities in the knowledge graph.",
  "observations*:observations:Each {entityName, contents: [text]}",
  ["add to memory about {observations}", "remember about {observations}"], res=lambda g, a: {"ok": True}, say="Noted.")
T("memory", "delete_entities", "Delete multiple entities and their associated relations from the knowledge graph.",
  "entityNames*:arr(person):Names of entities to delete",
  ["forget {entityNames}", "delete {entityNames} from memory", "remove the entities {entityNames}"], say="Removed from memory.")
T("memory", "search_nodes", "Search for nodes in the knowledge graph based on a query.",
  "query*:person:Text matched against names, types and observations",
  ["what do you remember about {query}", "search memory for {query}", "do you know anything about {query}"],
  res=lambda g, a: {"entities": [{"name": a["query"], "entityType": "person", "observations": [g.fact()]}], "relations": []},
  say="I remember that {entities.0.name} {entities.0.observations.0}.")
T("memory", "open_nodes", "Open specific nodes in the knowledge graph by their names.",
  "names*:arr(person):Entity names",
  ["open the memory entries for {names}", "show what's stored for {names}"],
  res=lambda g, a: {"entities": [{"name": n, "entityType": "person", "observations": [g.fact()]} for n in a["names"]]},
  say="{entities.0.name}: {entities.0.observations.0}.")
T("memory", "read_graph", "Read the entire knowledge graph.", "",
  ["show everything in memory", "dump the knowledge graph", "what do you remember"],
  res=lambda g, a: {"entities": [{"name": g.person(), "entityType": "person", "observations": [g.fact()]}], "relations": []},
  say="Memory has {entities.0.name}, who {entities.0.observations.0}.")

# ------------------------------------------------------------------------------------------------ fetch / web
T("web", "fetch", "Fetches a URL from the internet and optionally extracts its contents as markdown.",
  "url*:url:URL to fetch; max_length:int(100,100000):Maximum number of characters to return~at most {v} characters; raw:bool:Get the raw HTML~T:as raw HTML/T:without simplifying",
  ["fetch {url}", "get the page {url}[ {raw}]", "what's on {url}", "download {url}[, {max_length}]", "summarize {url}"],
  res=lambda g, a: {"content": "# " + g.pick(["Welcome", "Release notes", "Pricing", "About us"]) + "\n..."},
  say="The page at {url} starts with \"{content}\".")
T("web", "web_search", "Search the web and return the top results with titles, URLs and snippets.",
  "query*:search:Search query; num_results:int(1,20):How many results~top {v}/{v} results; safe_search:bool:Filter explicit results~T:with safe search",
  ["search the web for {query}", "google {query}", "look up {query} online[, {num_results}]", "find {query}"],
  res=lambda g, a: {"results": [{"title": g.pick(["Complete guide", "Top 10 tips", "Wikipedia", "Forum thread"]),
                    "url": g.url(), "snippet": "..."}]},
  say="The top result is \"{results.0.title}\" at {results.0.url}.")
T("web", "search_news", "Search recent news articles.",
  "query*:news:Topic or keywords; language:lang:Two-letter language code~in {v}; from_date:date_past:Oldest date~since {v}",
  ["news about {query}", "latest headlines on {query}[ {language}]", "what's happening with {query}", "any news on {query}[ since {from_date}]"],
  res=lambda g, a: {"articles": [{"title": g.headline(a["query"]), "source": g.pick(["Reuters", "BBC", "AP", "The Guardian"]),
                    "published": g.date_offset(0)}]},
  say="Top story: \"{articles.0.title}\" ({articles.0.source}).")
T("web", "get_top_headlines", "Top news headlines by category and country.",
  "category:enum(business|technology|sports|science|health|entertainment):News category~{v}; country:country_code:Two-letter country code~in {v}",
  ["top headlines", "what are today's {category} headlines[ {country}]", "latest {category} news"],
  res=lambda g, a: {"articles": [{"title": g.headline(a.get("category", "the economy")), "source": "Reuters"}]},
  say="Top headline: \"{articles.0.title}\".")
T("web", "wikipedia_summary", "Get the summary of a Wikipedia article.",
  "title*:wiki:Article title; lang:lang:Wikipedia language code~in {v}/from the {v} wikipedia",
  ["what does wikipedia say about {title}", "wiki summary of {title}[ {lang}]", "tell me about {title} from wikipedia"],
  res=lambda g, a: {"title": a["title"], "extract": a["title"] + " is " + g.pick(["a city", "a concept", "a person", "an event"]) + " ..."},
  say="{extract}")
T("web", "shorten_url", "Create a short link for a long URL.", "url*:url:Long URL; alias:word:Custom alias~as {v}",
  ["shorten {url}", "make a short link for {url}[ {alias}]"], res=lambda g, a: {"short_url": "https://sho.rt/" + g.hexid(6)},
  say="Short link: {short_url}")
T("web", "check_website_status", "Check if a website is up and how fast it responds.", "url*:url:URL to check",
  ["is {url} down", "check if {url} is up", "ping {url}"],
  res=lambda g, a: {"up": True, "status": 200, "response_ms": g.int(40, 900)}, say="{url} is up ({status}, {response_ms} ms).")

# ------------------------------------------------------------------------------------------------ git (MCP reference server)
T("git", "git_status", "Shows the working tree status.", "repo_path*:dir:Path to the Git repository",
  ["git status in {repo_path}", "what changed in {repo_path}", "any uncommitted changes in {repo_path}?"],
  res=lambda g, a: {"branch": g.branch(), "modified": [g.path(False)], "untracked": []},
  say="On {branch}, {modified.0} is modified.")
T("git", "git_diff_unstaged", "Shows changes in the working directory that are not yet staged.",
  "repo_path*:dir:Path to the Git repository; context_lines:int(0,20):Lines of context~with {v} lines of context",
  ["show unstaged changes in {repo_path}", "git diff in {repo_path}[ {context_lines}]"],
  res=lambda g, a: {"diff": "diff --git a/README.md b/README.md\n+new line"}, say="One line was added to README.md.")
T("git", "git_diff_staged", "Shows changes that are staged for commit.", "repo_path*:dir:Path to the Git repository",
  ["what's staged in {repo_path}", "show the staged diff for {repo_path}"],
  res=lambda g, a: {"diff": "diff --git a/app.py b/app.py\n-old\n+new"}, say="app.py has one changed line staged.")
T("git", "git_commit", "Records changes to the repository.", "repo_path*:dir:Path to the Git repository; message*:commit:Commit message",
  ["commit in {repo_path} with message {message}", "git commit -m {message} in {repo_path}", "commit the changes in {repo_path}: {message}"],
  res=lambda g, a: {"commit": g.hexid(7)}, say="Committed {commit}: {message}.")
T("git", "git_add", "Adds file contents to the staging area.", "repo_path*:dir:Path to the Git repository; files*:arr(path_rel):Files to stage",
  ["stage {files} in {repo_path}", "git add {files} in {repo_path}"], say="Staged.")
T("git", "git_log", "Shows the commit logs.", "repo_path*:dir:Path to the Git repository; max_count:int(1,100):Number of commits~last {v} commits/{v} entries",
  ["show the git log of {repo_path}[, {max_count}]", "last commits in {repo_path}", "what was committed recently in {repo_path}"],
  res=lambda g, a: {"commits": [{"hash": g.hexid(7), "author": g.person(), "message": g.commit()}]},
  say="Latest commit {commits.0.hash} by {commits.0.author}: {commits.0.message}.")
T("git", "git_create_branch", "Creates a new branch from an optional base branch.",
  "repo_path*:dir:Path to the Git repository; branch_name*:branch:New branch; base_branch:branch:Start point~from {v}/based on {v}",
  ["create branch {branch_name} in {repo_path}[ {base_branch}]", "new git branch {branch_name} in {repo_path}"], say="Created {branch_name}.")
T("git", "git_checkout", "Switches branches.", "repo_path*:dir:Path to the Git repository; branch_name*:branch:Branch to switch to",
  ["switch to {branch_name} in {repo_path}", "checkout {branch_name} in {repo_path}"], say="Switched to {branch_name}.")
T("git", "git_show", "Shows the contents of a commit.", "repo_path*:dir:Path to the Git repository; revision*:hex:Commit hash or ref",
  ["show commit {revision} in {repo_path}", "what changed in {revision} ({repo_path})"],
  res=lambda g, a: {"author": g.person(), "message": g.commit(), "files": [g.path(False)]},
  say="{revision} by {author}: {message}.")
T("git", "git_reset", "Unstages all staged changes.", "repo_path*:dir:Path to the Git repository",
  ["unstage everything in {repo_path}", "git reset {repo_path}"], say="All changes are unstaged.")
T("git", "git_blame", "Show who last changed each line of a file.", "repo_path*:dir:Path to the Git repository; file*:path_rel:File to blame",
  ["who changed {file} in {repo_path}", "git blame {file} in {repo_path}"],
  res=lambda g, a: {"lines": [{"line": 1, "author": g.person(), "commit": g.hexid(7)}]}, say="Line 1 was last changed by {lines.0.author}.")

# ------------------------------------------------------------------------------------------------ time (MCP reference server)
T("time", "get_current_time", "Get current time in a specific timezone.",
  "timezone*:tz:IANA timezone name (e.g. 'America/New_York', 'Europe/London')",
  ["what time is it in {timezone}", "current time in {timezone}", "time in {timezone} now?", "what's the time over in {timezone}"],
  res=lambda g, a: {"timezone": a["timezone"], "datetime": g.date_offset(0) + "T%02d:%02d:00" % (g.int(0, 23), g.int(0, 59)), "is_dst": False},
  say="It's {datetime} in {timezone}.")
T("time", "convert_time", "Convert time between timezones.",
  "source_timezone*:tz:Source IANA timezone; time*:time:Time to convert in 24-hour format (HH:MM); target_timezone*:tz:Target IANA timezone",
  ["what is {time} {source_timezone} in {target_timezone}", "convert {time} from {source_timezone} to {target_timezone}",
   "if it's {time} in {source_timezone}, what time is it in {target_timezone}", "{time} {source_timezone} to {target_timezone} time"],
  res=lambda g, a: {"source": {"timezone": a["source_timezone"], "datetime": a["time"]},
                    "target": {"timezone": a["target_timezone"], "datetime": "%02d:%s" % (g.int(0, 23), a["time"][3:])}},
  say="{time} in {source_timezone} is {target.datetime} in {target_timezone}.")
T("time", "get_date_difference", "Number of days between two dates.",
  "start_date*:date:First date; end_date*:date:Second date",
  ["how many days from {start_date} to {end_date}", "days between {start_date} and {end_date}"],
  res=lambda g, a: {"days": g.int(1, 60)}, say="That's {days} days.")
T("time", "add_days_to_date", "Add or subtract days from a date.",
  "date*:date:Start date; days*:int(-365,365):Days to add (negative to subtract)",
  ["what date is {days} days after {date}", "add {days} days to {date}"],
  res=lambda g, a: {"date": g.date_offset(g.int(1, 90))}, say="It's {date}.")
T("time", "list_holidays", "Public holidays of a country in a year.",
  "country*:country_code:ISO country code; year*:int(2024,2028):Year",
  ["public holidays in {country} in {year}", "what are the holidays in {country} for {year}"],
  res=lambda g, a: {"holidays": [{"date": "%d-12-25" % a["year"], "name": "Christmas Day"}]},
  say="For example {holidays.0.name} on {holidays.0.date}.")

# ------------------------------------------------------------------------------------------------ shell / dev tools
T("dev", "run_command", "Run a shell command in the project workspace and return its exit code, stdout and stderr. Long-running commands time out after the given number of seconds.",
  "command*:argv:The command and its arguments; cwd:dir_rel:Working directory relative to the workspace~in {v}/from {v}; timeout_seconds:int(5,600):Timeout in seconds~with a {v} second timeout/time out after {v} seconds",
  ["run {command}[ in {cwd}]", "execute {command}", "can you run {command} for me", "please run `{command}`[ from {cwd}]"],
  res=lambda g, a: {"exit_code": 0, "stdout": g.pick(["ok", "3 passed in 0.41s", "Python 3.12.1", "Filesystem  Size  Used\n/dev/sda1  50G  21G"]), "stderr": ""},
  say="It exited with code {exit_code}: {stdout}")
T("dev", "run_tests", "Run the project's test suite, optionally filtered by a name pattern, and report passed and failed tests.",
  "pattern:word:Only run tests whose name matches~matching {v}/only the {v} tests; verbose:bool:Show each test~T:verbosely/T:with verbose output; fail_fast:bool:Stop at the first failure~T:stop at the first failure",
  ["run the tests", "run the [{pattern} ]tests", "run the test suite[, {verbose}]", "do the tests pass?"],
  res=lambda g, a: {"passed": g.int(10, 400), "failed": g.pick([0, 0, 1, 2]), "duration_s": g.num(1, 90)},
  say="{passed} tests passed and {failed} failed.")
T("dev", "lint_code", "Run the linter on a path and list the problems found.",
  "path*:path_rel:File or directory to lint; fix:bool:Apply automatic fixes~T:and fix what it can/T:with autofix",
  ["lint {path}", "run the linter on {path}[ {fix}]", "check {path} for lint errors"],
  res=lambda g, a: {"problems": g.int(0, 12), "fixed": 0}, say="The linter found {problems} problems in {path}.")
T("dev", "format_code", "Format source files in place with the project's formatter.",
  "paths*:arr(path_rel):Files to format; check_only:bool:Only report files that would change~T:just check/T:without changing anything",
  ["format {paths}", "run the formatter on {paths}[, {check_only}]"], res=lambda g, a: {"changed": g.int(0, 3)},
  say="{changed} files were reformatted.")
T("dev", "search_code", "Search the codebase for a regular expression and return matching lines with file and line number.",
  "pattern*:word:Regular expression to search for; path:dir_rel:Limit the search to this directory~in {v}/under {v}; max_results:int(1,200):Maximum matches~at most {v} matches/show {v} results",
  ["search the code for {pattern}[ in {path}]", "grep for {pattern}", "where is {pattern} used[ under {path}]", "find {pattern} in the codebase"],
  res=lambda g, a: {"matches": [{"file": g.path(False), "line": g.int(1, 400), "text": a["pattern"] + "()"}]},
  say="It appears in {matches.0.file} at line {matches.0.line}.")
T("dev", "install_package", "Install a package with the project's package manager (pip, npm or cargo).",
  "name*:enum(requests|numpy|pandas|express|lodash|serde|tokio|pytest|react|axios):Package name; version:enum(latest|1.0.0|2.31.0|^4.18|3.2):Version constraint~version {v}/at {v}; dev:bool:Install as a development dependency~T:as a dev dependency",
  ["install {name}[ {version}]", "add the {name} package[, {dev}]", "pip install {name}", "npm install {name}[ {dev}]"],
  res=lambda g, a: {"installed": a["name"], "version": "2.31.0"}, say="Installed {installed} {version}.")
T("dev", "docker_ps", "List running Docker containers.", "all:bool:Include stopped containers~T:including stopped ones/T:all of them",
  ["which containers are running", "docker ps[ {all}]", "list my docker containers"],
  res=lambda g, a: {"containers": [{"id": g.hexid(12), "image": g.pick(["nginx:1.25", "redis:7", "postgres:16"]), "status": "Up 3 hours"}]},
  say="{containers.0.image} is running ({containers.0.status}).")
T("dev", "docker_logs", "Fetch the logs of a container.",
  "container*:hex:Container id or name; tail:int(10,1000):Number of lines from the end~last {v} lines/the last {v}",
  ["show the logs of container {container}[, {tail}]", "docker logs {container}", "what is {container} logging"],
  res=lambda g, a: {"lines": ["GET /health 200", "worker started"]}, say="The last lines are: {lines}.")
T("dev", "docker_restart", "Restart a Docker container.", "container*:hex:Container id or name",
  ["restart container {container}", "docker restart {container}", "bounce {container}"], say="Container restarted.")
T("dev", "regex_test", "Test a regular expression against a sample string and return the matches.",
  "pattern*:enum(\\d+|[A-Z]\\w+|\\w+@\\w+\\.com|^#.*$):The regular expression; text*:text:String to test",
  ["does {pattern} match {text}", "test the regex {pattern} on {text}"],
  res=lambda g, a: {"matches": []}, say="{matches|It doesn't match|It matches}.")
T("dev", "encode_base64", "Encode or decode text as Base64.",
  "text*:text:Input text; mode:enum(encode|decode):Encode (default) or decode~{v} it",
  ["base64 encode {text}", "convert {text} to base64", "{mode} {text} with base64"],
  res=lambda g, a: {"result": "UnVubmluZyAxMCBtaW51dGVzIGxhdGU="}, say="The result is {result}.")
T("dev", "generate_uuid", "Generate one or more random UUIDs (version 4).", "count:int(1,20):How many UUIDs~{v} of them/generate {v}",
  ["give me a uuid", "generate [{count} ]UUIDs", "I need a new uuid"],
  res=lambda g, a: {"uuids": ["%s-%s-4%s-a%s-%s" % (g.hexid(8), g.hexid(4), g.hexid(3), g.hexid(3), g.hexid(12))]},
  say="Here you go: {uuids.0}.")

# ------------------------------------------------------------------------------------------------ crm
T("crm", "search_crm_contacts", "Search CRM contacts by name, email or company. Returns contact ids, owners and lifecycle stage.",
  "query*:person:Name, email or company to search for; limit:int(1,50):Maximum results~top {v}/{v} results",
  ["find {query} in the CRM", "look up {query} in salesforce", "search CRM contacts for {query}", "who is {query} in our CRM"],
  res=lambda g, a: {"contacts": [{"id": g.ident("003", 7), "name": a["query"], "company": g.company(), "stage": g.pick(["lead", "opportunity", "customer"])}]},
  say="{contacts.0.name} at {contacts.0.company} is a {contacts.0.stage}.")
T("crm", "create_lead", "Create a new sales lead in the CRM.",
  "name*:person:Full name of the lead; company*:company:Company name; email:email:Email address~email {v}/, {v}; source:enum(website|referral|event|cold_call|linkedin):Lead source~from {v}/via {v}; estimated_value:amount:Estimated deal size in USD~worth {v}/about ${v}",
  ["add {name} from {company} as a lead[, {email}]", "create a lead: {name}, {company}[, source {source}]",
   "new lead {name} at {company}[ worth {estimated_value}]", "log {name} of {company} as a new lead"],
  res=lambda g, a: {"lead_id": g.ident("00Q", 7), "status": "new"}, say="Lead {lead_id} created for {name}.")
T("crm", "update_deal_stage", "Move a deal to another pipeline stage.",
  "deal_id*:id(DL-,5):Deal id; stage*:enum(qualification|proposal|negotiation|closed_won|closed_lost=lost/closed lost):New stage; note:text:Note to log with the change~with the note {v}/note: {v}",
  ["move deal {deal_id} to {stage}", "set {deal_id} to {stage}[, {note}]", "update deal {deal_id}: stage {stage}"],
  res=lambda g, a: {"deal_id": a["deal_id"], "stage": a["stage"]}, say="Deal {deal_id} is now in {stage}.")
T("crm", "list_deals", "List deals in the sales pipeline, filtered by owner or stage.",
  "owner:first:Deal owner's first name~owned by {v}/for {v}; stage:enum(qualification|proposal|negotiation|closed_won|closed_lost):Pipeline stage~in {v}/at {v}; min_value:amount:Only deals worth at least this, in USD~over ${v}/worth more than {v}",
  ["show open deals[ owned by {owner}]", "list deals in {stage}", "which deals are in the pipeline[ {min_value}]", "pipeline[ for {owner}]"],
  res=lambda g, a: {"deals": [{"id": g.ident("DL-", 5), "name": g.company() + " renewal", "value": g.int(5, 90) * 1000}]},
  say="The top deal is {deals.0.name} ({deals.0.id}), worth ${deals.0.value}.")
T("crm", "log_activity", "Log a call, meeting or email against a CRM contact.",
  "contact_id*:id(003,7):Contact id; type*:enum(call|meeting|email):Activity type; summary*:text:What happened; date:date_past:When it happened (default today)~on {v}",
  ["log a {type} with {contact_id}: {summary}", "record {type} for contact {contact_id}[ {date}] - {summary}"],
  res=lambda g, a: {"activity_id": g.ident("ACT", 6)}, say="Logged the {type} ({activity_id}).")
T("crm", "get_account", "Get an account (company) record with its owner, industry, revenue and open deals.",
  "account_name*:company:Company name",
  ["pull up the {account_name} account", "what do we know about {account_name}", "show the account for {account_name}"],
  res=lambda g, a: {"name": a["account_name"], "owner": g.person(), "industry": g.pick(["Retail", "Healthcare", "Software"]), "open_deals": g.int(0, 5)},
  say="{name} is owned by {owner}, in {industry}, with {open_deals} open deals.")
T("crm", "create_task_crm", "Create a follow-up task for a sales rep.",
  "subject*:task:Task subject; due_date*:date:Due date; assignee:first:Rep to assign~for {v}/assign it to {v}; priority:enum(low|normal|high):Priority~{v} priority",
  ["remind sales to {subject} {due_date}", "create a follow-up task {subject} due {due_date}[ for {assignee}]",
   "add a CRM task: {subject}, due {due_date}[, {priority} priority]"],
  res=lambda g, a: {"task_id": g.ident("T-", 5)}, say="Task {task_id} is due {due_date}.")
T("crm", "merge_crm_records", "Merge two duplicate CRM contact records, keeping the first.",
  "primary_id*:id(003,7):Record to keep; duplicate_id*:id(003,7):Record to merge into it",
  ["merge {duplicate_id} into {primary_id}", "{primary_id} and {duplicate_id} are duplicates, merge them"], say="Merged.")
T("crm", "get_sales_report", "Summarise closed revenue for a period, optionally by rep.",
  "period*:enum(this_month=this month|last_month=last month|this_quarter=this quarter/Q-to-date|last_quarter=last quarter|ytd=this year/year to date):Reporting period; group_by:enum(rep|region|product):Breakdown~by {v}/per {v}",
  ["how much did we close {period}", "sales report for {period}[ {group_by}]", "revenue {period}[ broken down {group_by}]"],
  res=lambda g, a: {"period": a["period"], "closed_revenue": g.int(50, 900) * 1000, "deals_won": g.int(3, 40)},
  say="We closed ${closed_revenue} across {deals_won} deals.")
T("crm", "assign_lead", "Assign a lead to a sales rep.", "lead_id*:id(00Q,7):Lead id; rep*:first:Sales rep's first name",
  ["assign lead {lead_id} to {rep}", "give {lead_id} to {rep}", "{rep} should own lead {lead_id}"], say="{rep} now owns {lead_id}.")

# ------------------------------------------------------------------------------------------------ ticketing (support desk, jira)
T("ticketing", "create_ticket", "Create a support ticket for a customer.",
  "subject*:subject:Short summary; description*:body:Full description of the problem; priority:enum(low|normal|high|urgent):Priority~{v} priority/mark it {v}; requester_email:email:Customer email~for {v}/from {v}; tags:arr(label):Tags~tagged {v}/tag it {v}",
  ["open a ticket {subject}: {description}[, {priority} priority]", "create a support ticket titled {subject} saying {description}[ for {requester_email}]",
   "file a ticket: {subject} - {description}", "new ticket[ for {requester_email}], subject {subject}, details {description}"],
  res=lambda g, a: {"ticket_id": g.int(1000, 99999), "status": "open"}, say="Ticket #{ticket_id} is open.")
T("ticketing", "get_ticket", "Get a ticket's status, assignee, priority and latest comment.",
  "ticket_id*:int(1000,99999):Ticket number",
  ["what's the status of ticket {ticket_id}", "show ticket #{ticket_id}", "any update on {ticket_id}?", "look up ticket {ticket_id}"],
  res=lambda g, a: {"id": a["ticket_id"], "status": g.pick(["open", "pending", "solved"]), "assignee": g.person(), "priority": "normal"},
  say="Ticket #{id} is {status}, assigned to {assignee}.")
T("ticketing", "update_ticket", "Update a ticket's status, priority or assignee.",
  "ticket_id*:int(1000,99999):Ticket number; status:enum(open|pending|on_hold=on hold|solved|closed):New status~mark it {v}/set it to {v}; priority:enum(low|normal|high|urgent):New priority~make it {v} priority; assignee_email:email:Agent to assign~assign it to {v}",
  ["set ticket {ticket_id} to {status}", "mark #{ticket_id} as {status}", "ticket {ticket_id}: priority {priority}", "reassign {ticket_id} to {assignee_email}"],
  res=lambda g, a: {"id": a["ticket_id"], "updated": True}, say="Ticket #{ticket_id} is updated.")
T("ticketing", "add_ticket_comment", "Add a public reply or an internal note to a ticket.",
  "ticket_id*:int(1000,99999):Ticket number; body*:body:Comment text; public:bool:Visible to the customer~T:as a public reply/F:as an internal note/F:internal only",
  ["reply on ticket {ticket_id}: {body}", "add a note to #{ticket_id} saying {body}[ {public}]", "comment {body} on {ticket_id}"],
  res=lambda g, a: {"comment_id": g.int(1, 99999)}, say="Comment added to #{ticket_id}.")
T("ticketing", "search_tickets", "Search tickets by text, status or requester.",
  "query*:word:Search text; status:enum(open|pending|solved|closed):Status filter~{v} ones/that are {v}; requester_email:email:Requester~from {v}",
  ["find tickets about {query}", "search {status} tickets for {query}", "any tickets mentioning {query}[ from {requester_email}]"],
  res=lambda g, a: {"tickets": [{"id": g.int(1000, 99999), "subject": g.subject(), "status": a.get("status", "open")}]},
  say="Ticket #{tickets.0.id} \"{tickets.0.subject}\" is {tickets.0.status}.")
T("ticketing", "escalate_ticket", "Escalate a ticket to a higher support tier with a reason.",
  "ticket_id*:int(1000,99999):Ticket number; tier*:enum(tier2=tier 2/level 2|tier3=tier 3|engineering=engineering/the dev team):Target tier; reason:text:Why~because {v}",
  ["escalate ticket {ticket_id} to {tier}", "send #{ticket_id} up to {tier}[ {reason}]"], say="Ticket #{ticket_id} was escalated.")
T("ticketing", "create_jira_issue", "Create a Jira issue in a project.",
  "project_key*:enum(WEB|API|OPS|MOB|DATA):Project key; summary*:issue_title:Summary; issue_type*:enum(Bug=bug|Task=task|Story=story|Epic=epic):Issue type; priority:enum(Highest|High|Medium|Low):Priority~{v} priority; assignee:first:Assignee~assign it to {v}/for {v}",
  ["create a {issue_type} in {project_key}: {summary}", "file a jira {issue_type} in {project_key} called {summary}[, {priority} priority]",
   "new {project_key} {issue_type} {summary}[ assigned to {assignee}]"],
  res=lambda g, a: {"key": "%s-%d" % (a["project_key"], g.int(10, 999))}, say="Created {key}.")
T("ticketing", "transition_jira_issue", "Move a Jira issue to another workflow status.",
  "issue_key*:id(WEB-,3):Issue key; status*:enum(To Do=to do/backlog|In Progress=in progress/started|In Review=in review|Done=done/finished):Target status",
  ["move {issue_key} to {status}", "mark {issue_key} as {status}", "set {issue_key} {status}"], say="{issue_key} is now {status}.")
T("ticketing", "search_jira", "Search Jira issues with JQL.",
  "jql*:enum(assignee = currentUser() AND status != Done|project = WEB AND type = Bug|priority = Highest AND resolution = Unresolved|sprint in openSprints()):JQL query; max_results:int(1,100):Maximum issues~top {v}",
  ["run the jql {jql}", "search jira: {jql}[, {max_results}]"],
  res=lambda g, a: {"total": g.int(0, 40), "issues": [{"key": "WEB-%d" % g.int(10, 999), "summary": g.issue_title()}]},
  say="{total} issues; first is {issues.0.key}: {issues.0.summary}.")
T("ticketing", "get_sprint", "Get the active sprint of a board with its goal, dates and progress.",
  "board*:enum(WEB|API|OPS|MOB):Board name",
  ["how is the {board} sprint going", "current sprint on {board}", "what's left in the {board} sprint"],
  res=lambda g, a: {"name": "Sprint %d" % g.int(10, 80), "ends": g.date_offset(g.int(1, 10)), "done": g.int(5, 20), "remaining": g.int(1, 15)},
  say="{name} ends {ends}: {done} done, {remaining} remaining.")
T("ticketing", "log_work", "Log time spent on a Jira issue.",
  "issue_key*:id(WEB-,3):Issue key; minutes*:int(5,480):Time spent in minutes; comment:text:Work description~: {v}",
  ["log {minutes} minutes on {issue_key}", "I spent {minutes} minutes on {issue_key}[, {comment}]"], say="Logged {minutes} minutes on {issue_key}.")
T("ticketing", "list_my_tickets", "List the tickets assigned to me.",
  "status:enum(open|pending|solved):Status filter~{v} ones/only {v}",
  ["what tickets do I have", "show my [{status} ]tickets", "my queue"],
  res=lambda g, a: {"tickets": [{"id": g.int(1000, 99999), "subject": g.subject()} for _ in range(2)]},
  say="You have #{tickets.0.id} \"{tickets.0.subject}\" and #{tickets.1.id}.")
