"""Synthetic tool-calling conversations, deterministic from a seed.

Usage: gen_data.py --out DIR [--seed 1] [--train 60000] [--heldout 600] [--drills F] [--synth F] [--mini N]
Writes DIR/train.jsonl and DIR/heldout.jsonl (one conversation per line, see chat_format.py); with --mini N only
DIR/train.jsonl, N short call-only conversations (an experimental first training stage).
Tool nouns, parameter names and values are partitioned by a hash into train and held-out pools, so the
held-out split only has tool names, parameter names and values never seen in training.
"""
import argparse
import json
import random
import zlib

# ---------------------------------------------------------------------------------------------- pools
NOUNS = """weather forecast|order|invoice|ticket|meeting|reminder|calendar event|email|message|contact|user|account|
payment|refund|shipment|package|flight|hotel room|rental car|restaurant table|recipe|playlist|song|podcast|movie|
book|article|news summary|stock price|exchange rate|currency conversion|translation|timer|alarm|note|document|file|
folder|photo|video|report|spreadsheet|task|project|issue|pull request|build|deployment|server|database backup|
password|subscription|coupon|product|review|cart|wishlist|appointment|prescription|workout|route|traffic report|
parking spot|train ticket|bus schedule|taxi|delivery|grocery list|bank transfer|balance|budget|expense|receipt|
salary slip|leave request|job posting|candidate|interview|survey|poll|quiz|lesson|course|exam result|library loan|
device|thermostat|light|door lock|camera|sensor reading|battery status|printer|backup|log entry|alert|incident|
domain|certificate|api key|webhook|container|cluster|repository|branch|commit|release|newsletter|event ticket|
venue|concert|museum visit|tour|visa application|passport|insurance claim|loan|mortgage quote|tax return|donation|
pet profile|vet visit|plant|garden plan|weather alert|air quality|earthquake report|tide table|sunrise time|
shopping list|gift card|loyalty points|seat|boarding pass|luggage|charging station|fuel price|recycling pickup|
volunteer shift|team|channel|thread|comment|bookmark|feed|profile|avatar|license|warranty|repair request""".split("|")
NOUNS = [n.strip() for n in NOUNS if n.strip()]

# verb -> (request phrasings, past tense)
VERBS = {
    "get": (["get", "fetch", "look up", "show me", "retrieve"], "retrieved"),
    "create": (["create", "make", "set up", "add"], "created"),
    "delete": (["delete", "remove", "erase"], "deleted"),
    "update": (["update", "change", "modify", "edit"], "updated"),
    "search": (["search for", "find", "look for"], "searched"),
    "list": (["list", "show all", "enumerate"], "listed"),
    "send": (["send", "deliver", "forward"], "sent"),
    "cancel": (["cancel", "call off", "abort"], "cancelled"),
    "book": (["book", "reserve"], "booked"),
    "check": (["check", "verify", "inspect"], "checked"),
    "schedule": (["schedule", "plan"], "scheduled"),
    "share": (["share", "publish"], "shared"),
    "convert": (["convert", "transform"], "converted"),
    "track": (["track", "follow"], "tracked"),
    "rename": (["rename", "relabel"], "renamed"),
    "archive": (["archive", "store away"], "archived"),
    "restore": (["restore", "recover"], "restored"),
    "approve": (["approve", "accept"], "approved"),
}

FIRST = """Alice Bob Carla Daniel Elena Farid Grace Hiro Ines Jonas Kira Liam Maya Noah Olga Pablo Quinn Rosa Samir Tara
Umar Vera Wei Ximena Yusuf Zoe Amara Bruno Chloe Dmitri Esme Felix Gita Hugo Ivy Jamal Keiko Lars Mina Nils Omar
Priya Rafael Sofia Tomas Ulla Victor Wanda Yara Zane Anya Boris Celine Dario Eva Fatima Gustav Hana Igor Julia Karim
Lena Marco Nadia Oskar Paula Ravi Selin Theo Una Vikram Willa Xavier Yuki Zara Aiden Beatriz Cyrus Daphne Emil Freya
Goran Helga Ismael Jade Kofi Luna Mateo Nora Otto Petra Rui Saanvi Tariq Uma Valentin Wren""".split()
LAST = """Smith Garcia Chen Muller Rossi Novak Tanaka Silva Kowalski Dubois Jensen Okafor Patel Ivanova Haddad Larsen
Moreau Nakamura Costa Fischer Kim Lopez Berg Ahmed Schulz Romano Horvat Sato Pereira Nowak Laurent Andersen Mensah
Shah Petrova Mansour Nilsen Lefebvre Ito Santos Weber Park Diaz Lund Khan Wagner Greco Kovac Suzuki Almeida Wojcik
Girard Holm Boateng Rao Sokolova Aziz Dahl Fontaine Mori Ferreira Becker Cho Ruiz Strand Hussain Hoffmann Bruno Babic
Kato Rocha Zielinski Roux Eriksen Asante Nair Volkova Karimi Vik Mercier Ueda Carvalho""".split()
CITIES = """Paris Lyon Berlin Munich Madrid Seville Rome Milan Vienna Prague Warsaw Krakow Lisbon Porto Dublin Oslo
Bergen Stockholm Helsinki Tallinn Riga Vilnius Athens Sofia Bucharest Budapest Zagreb Belgrade Istanbul Cairo Nairobi
Lagos Accra Dakar Tunis Casablanca Johannesburg Tokyo Osaka Kyoto Seoul Busan Beijing Shanghai Taipei Manila Hanoi
Bangkok Jakarta Singapore Mumbai Delhi Chennai Karachi Dubai Doha Tehran Toronto Vancouver Montreal Chicago Boston
Seattle Denver Austin Miami Atlanta Phoenix Portland Houston Dallas Mexico Bogota Lima Quito Santiago Montevideo
Caracas Havana Sydney Melbourne Auckland Perth Brisbane Reykjavik Geneva Zurich Basel Brussels Antwerp Amsterdam
Rotterdam Hamburg Cologne Marseille Nice Bordeaux Naples Turin Valencia Bilbao Gdansk Brno Graz Salzburg Ljubljana
Split Tbilisi Yerevan Baku Almaty Tashkent Ulaanbaatar Kathmandu Colombo Dhaka Yangon Phnom Kigali Kampala Lusaka
Harare Windhoek Maputo Luanda Abuja Rabat Algiers Tripoli Amman Beirut Muscat Riyadh""".split()
WORDS = """red blue green quiet bright happy lunch noon tomorrow meeting report draft final urgent coffee garden river
mountain ocean winter summer spring autumn morning evening project alpha beta gamma delta launch review budget team
party dinner birthday holiday trip photo music jazz rock piano guitar soccer tennis chess yoga coding python rust data
cloud server kitchen bedroom office school market bakery pizza pasta salad soup bread cheese apple banana cherry lemon
orange mango grape sunny rainy windy cozy fast slow early late weekly monthly daily secret public private shared new
old big small warm cold green silver golden crystal purple amber ivory cotton linen velvet paper glass stone maple
cedar pine willow falcon eagle tiger panda otter fox wolf bear dolphin whale salmon tulip rose lily daisy orchid
comet planet galaxy rocket signal pixel vector kernel cache socket""".split()
DOMAINS = ["example.com", "mail.org", "corp.net", "acme.io", "inbox.dev", "post.eu", "work.co", "home.me"]
ID_PREFIXES = ["ORD", "INV", "TCK", "USR", "ACC", "PKG", "BK", "REF", "TX", "EMP", "DOC", "PRJ", "CL", "RX", "VIN",
               "SKU", "LN", "CRT", "EV", "PR"]

ENUMS = [
    ["celsius", "fahrenheit"], ["celsius", "fahrenheit", "kelvin"], ["low", "medium", "high"],
    ["low", "normal", "high", "urgent"], ["asc", "desc"], ["json", "csv", "xml"], ["pdf", "docx", "txt"],
    ["small", "medium", "large"], ["driving", "walking", "cycling", "transit"], ["english", "french", "german"],
    ["spanish", "italian", "portuguese", "dutch"], ["USD", "EUR", "GBP"], ["JPY", "CHF", "CAD", "AUD"],
    ["open", "closed", "pending"], ["daily", "weekly", "monthly"], ["economy", "business", "first"],
    ["metric", "imperial"], ["public", "private", "unlisted"], ["red", "yellow", "green"], ["north", "south", "east",
    "west"], ["morning", "afternoon", "evening"], ["standard", "express", "overnight"], ["mp3", "flac", "wav"],
    ["hd", "sd", "uhd"], ["beginner", "intermediate", "advanced"], ["cash", "card", "transfer"],
    ["plain", "markdown", "html"], ["window", "aisle", "middle"], ["sedan", "suv", "van"], ["vegan", "vegetarian",
    "omnivore"], ["newest", "oldest", "popular"], ["minor", "major", "critical"], ["read", "write", "admin"],
]

# kind -> (json type, candidate parameter names)
KINDS = {
    "person": ("string", "name full_name contact_name recipient attendee guest_name owner assignee customer_name "
               "author passenger driver patient employee reviewer sender host manager student".split()),
    "city": ("string", "city location destination origin departure_city arrival_city home_city town pickup_city "
             "venue_city region_city target_city".split()),
    "date": ("string", "date start_date end_date due_date check_in check_out birthday deadline travel_date "
             "delivery_date event_date since until".split()),
    "time": ("string", "time start_time end_time alarm_time pickup_time departure_time reminder_time".split()),
    "email": ("string", "email email_address recipient_email contact_email cc reply_to billing_email".split()),
    "id": ("string", "id order_id invoice_id ticket_id user_id account_id package_id booking_id reference "
           "transaction_id employee_id document_id project_id claim_id item_id record_id".split()),
    "text": ("string", "text message title subject query note content body caption comment keyword description "
             "label_text summary".split()),
    "integer": ("integer", "count quantity limit max_results days nights guests seats age page year duration_minutes "
                "retries priority_level floor rooms size_gb".split()),
    "number": ("number", "amount price budget weight temperature latitude longitude distance_km rating "
               "discount_percent volume tip".split()),
    "boolean": ("boolean", "notify include_archived urgent dry_run public verbose send_receipt recursive "
                "force overwrite include_details refundable pinned silent auto_renew".split()),
    "enum": ("string", "unit priority sort_order format file_type size mode language currency status frequency "
             "travel_class system visibility level payment_method style seat_preference vehicle diet order_by "
             "severity access shipping quality".split()),
    "array": ("array", "tags labels items recipients keywords ingredients attendees categories skills "
              "topics".split()),
    "object": ("object", "address location_info dimensions filters options contact_details schedule "
               "coordinates".split()),
}
KIND_WEIGHTS = {"person": 2, "city": 2, "date": 2, "time": 1, "email": 1, "id": 2, "text": 2, "integer": 2,
                "number": 1, "boolean": 2, "enum": 2, "array": 1, "object": 0.6}
SUB_KINDS = ["person", "city", "date", "email", "id", "text", "integer", "number"]
RESULT_FIELDS = {"status": "word", "id": "id", "total": "number", "count": "integer", "name": "person",
                 "city": "city", "date": "date", "temperature": "integer", "price": "number",
                 "message": "text", "url": "url", "eta": "time", "score": "number", "code": "id"}

SYSTEMS = ["", "", "You are a helpful assistant.", "You are dloop, an agent that uses tools.",
           "You are a concise assistant with tools.", "Use the tools when they help."]


def split_of(s):
    return "heldout" if zlib.crc32(s.encode()) % 5 == 0 else "train"


def partition(items, split, min_each=1):
    """Items of one split; each split keeps at least min_each items (the last ones by hash go to held-out)."""
    ranked = sorted(items, key=lambda s: zlib.crc32(s.encode()))
    held = [s for s in ranked if split_of(s) == "heldout"] or ranked[-min_each:]
    if split == "heldout":
        return held
    return [s for s in ranked if s not in held]


# Pseudo-words for --synth: syllables of English-like spelling, so every piece of a name or value the tokenizer
# makes is seen often, and a value can only be produced by copying it from the prompt, not recalled from a list.
ONSETS = ("b c d f g h j k l m n p r s t v w z br ch cl cr dr fl fr gl gr kl pl pr sc sh sk sl sm sn sp st str th "
          "tr tw qu wh").split()
VOWELS = "a e i o u a e i o u ai ea ee ie oa oo ou au y".split()
CODAS = ["", "", "", "", "n", "r", "s", "l", "m", "t", "d", "k", "nd", "rt", "st", "ng", "rk", "ll", "rn", "x"]


class Pools:
    def __init__(self, split, synth=0.0):
        self.split = split
        self.synth = synth
        self.nouns = partition(NOUNS, split)
        self.first = partition(FIRST, split)
        self.last = partition(LAST, split)
        self.cities = partition(CITIES, split)
        self.words = partition(WORDS, split)
        self.enums = [e for e in ENUMS if split_of(",".join(e)) == split] or ENUMS[-2:]
        self.kind_names = {k: partition(v[1], split) for k, v in KINDS.items()}

    def in_split(self, value):
        return split_of(str(value)) == self.split

    def pseudo(self, rng, lo=1, hi=3):
        """A made-up lower-case word whose hash falls in this split."""
        while True:
            w = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS)
                        for _ in range(rng.randint(lo, hi)))
            if len(w) >= 3 and self.in_split(w):
                return w

    def pick(self, rng, items, kind):
        """rng.choice(items), or with probability synth a pseudo-word of the kind (noun, name, param, word).
        With synth 0 this draws exactly what rng.choice does, so the default data stays the same."""
        if self.synth <= 0 or rng.random() >= self.synth:
            return rng.choice(items)
        if kind == "name":
            return self.pseudo(rng, 2, 3).capitalize()
        if kind == "noun":
            w = self.pseudo(rng, 1, 2)
            return w if rng.random() < 0.6 else w + " " + rng.choice(items).split()[-1]
        if kind == "param":
            w = self.pseudo(rng, 1, 2)
            return w if rng.random() < 0.7 else w + "_" + self.pseudo(rng, 1, 1)
        return self.pseudo(rng, 1, 2)


# ---------------------------------------------------------------------------------------------- values
def gen_value(rng, pools, kind, spec=None):
    """A value of a kind, drawn until its hash falls in the pool's split."""
    for _ in range(100):
        v = _raw_value(rng, pools, kind, spec)
        if kind in ("boolean", "enum", "array", "object") or pools.in_split(v):
            return v
    return v


def _raw_value(rng, pools, kind, spec):
    if kind == "person":
        return pools.pick(rng, pools.first, "name") + " " + pools.pick(rng, pools.last, "name")
    if kind == "city":
        return pools.pick(rng, pools.cities, "name")
    if kind == "date":
        return "%04d-%02d-%02d" % (rng.randint(2020, 2030), rng.randint(1, 12), rng.randint(1, 28))
    if kind == "time":
        return "%02d:%02d" % (rng.randint(0, 23), rng.choice([0, 5, 10, 15, 20, 30, 40, 45, 50]))
    if kind == "email":
        first, last = pools.pick(rng, pools.first, "name"), pools.pick(rng, pools.last, "name")
        return "%s.%s@%s" % (first.lower(), last.lower(), rng.choice(DOMAINS))
    if kind == "id":
        return "%s-%d" % (rng.choice(ID_PREFIXES), rng.randint(100, 99999))
    if kind == "text":
        return " ".join(pools.pick(rng, pools.words, "word") for _ in range(rng.randint(1, 4)))
    if kind == "word":
        return rng.choice(["ok", "done", "success", "queued", "confirmed", "active", "sent", "pending"])
    if kind == "url":
        return "https://%s/%s" % (rng.choice(DOMAINS), pools.pick(rng, pools.words, "word"))
    if kind == "integer":
        return rng.choice([rng.randint(1, 9), rng.randint(10, 99), rng.randint(100, 2000)])
    if kind == "number":
        return round(rng.uniform(0.5, 500.0), rng.choice([1, 2]))
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "enum":
        return rng.choice(spec["enum"])
    if kind == "array":
        n = rng.randint(1, 3)
        return rng.sample(pools.words, n) if spec["items"]["type"] == "string" else rng.sample(range(1, 50), n)
    if kind == "object":
        return {k: gen_value(rng, pools, s["kind"], s) for k, s in spec["sub"].items()}
    raise ValueError(kind)


def phrase(name):
    return name.replace("_", " ")


# ---------------------------------------------------------------------------------------------- tools
def make_param(rng, pools, kind, used):
    names = [n for n in pools.kind_names[kind] if n not in used]
    if not names:
        return None, None
    name = pools.pick(rng, names, "param")
    if name in used:
        return None, None
    jtype = KINDS[kind][0]
    spec = {"kind": kind, "schema": {"type": jtype}}
    if kind == "enum":
        spec["enum"] = rng.choice(pools.enums)
        spec["schema"]["enum"] = spec["enum"]
    if kind == "array":
        item_type = "string" if rng.random() < 0.8 else "integer"
        spec["items"] = {"type": item_type}
        spec["schema"]["items"] = {"type": item_type}
    if kind == "object":
        sub_kinds = rng.sample(SUB_KINDS, 2)
        sub = {}
        for sk in sub_kinds:
            sn, ss = make_param(rng, pools, sk, set(sub) | used)
            if sn:
                sub[sn] = ss
        spec["sub"] = sub
        spec["schema"]["properties"] = {k: s["schema"] for k, s in sub.items()}
        spec["schema"]["required"] = list(sub)
    if rng.random() < 0.4:
        spec["schema"]["description"] = phrase(name).capitalize()
    return name, spec


def sample_kinds(rng, n):
    kinds = []
    while len(kinds) < n:
        k = rng.choices(list(KIND_WEIGHTS), weights=list(KIND_WEIGHTS.values()))[0]
        if k not in kinds:
            kinds.append(k)
    return kinds


def make_params(rng, pools, kinds):
    """Parameters of the given kinds (one may be missing when its names run out), each required with p 0.6."""
    params = {}
    for kind in kinds:
        pname, spec = make_param(rng, pools, kind, set(params))
        if pname:
            params[pname] = spec
    names = list(params)
    required = [n for n in names if rng.random() < 0.6]
    for n in names:
        params[n]["required"] = n in required
    return params, names, required


def make_tool(rng, pools, verb=None, noun=None, extra_kind=None, small=False):
    verb = verb or rng.choice(list(VERBS))
    noun = noun or pools.pick(rng, pools.nouns, "noun")
    name = verb + "_" + noun.replace(" ", "_")
    n_params = rng.choice([0, 1, 1, 2] if small else [0, 1, 1, 2, 2, 2, 3, 3, 4])
    kinds = sample_kinds(rng, n_params)
    if extra_kind and extra_kind not in kinds:
        kinds = [extra_kind] + kinds[:3]
    params, names, required = make_params(rng, pools, kinds)
    desc = rng.choice(["%s %s.", "%s a %s.", "%s the %s."]) % (verb.capitalize(), noun)
    schema = {"name": name, "description": desc,
              "parameters": {"type": "object", "properties": {n: params[n]["schema"] for n in names},
                             "required": required}}
    return {"verb": verb, "noun": noun, "name": name, "params": params, "schema": schema}


# ---------------------------------------------------------------------------------------------- requests
def mention(rng, name, spec, value):
    """A phrase that states one argument value in the request."""
    p = phrase(name)
    kind = spec["kind"]
    if kind == "boolean":
        on = ["with %s on", "with %s enabled", "%s: yes", "and set %s to true", "turning %s on"]
        off = ["with %s off", "with %s disabled", "%s: no", "and set %s to false", "without %s"]
        return rng.choice(on if value else off) % p
    if kind == "array":
        items = [str(x) for x in value]
        listed = items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
        return rng.choice(["with %s %s", "%s: %s", "for %s %s"]) % (p, listed)
    if kind == "object":
        inner = ", ".join(mention(rng, sn, ss, value[sn]) for sn, ss in spec["sub"].items())
        return rng.choice(["%s (%s)", "with %s %s", "%s: %s"]) % (p, inner)
    if kind == "text":
        return rng.choice(['%s "%s"', 'with %s "%s"', '%s set to "%s"', "%s '%s'"]) % (p, value)
    v = str(value)
    forms = ["%s %s", "with %s %s", "%s: %s", "%s set to %s", "%s = %s", "where %s is %s", "using %s %s"]
    if kind == "city" and rng.random() < 0.3:
        return rng.choice(["%s %s", "for %s %s"]) % (p, v)
    if kind == "enum" and rng.random() < 0.3:
        return rng.choice(["in %s %s", "with %s as %s"]) % (v, p) if rng.random() < 0.5 else "%s %s" % (v, p)
    return rng.choice(forms) % (p, v)


def join_mentions(rng, parts):
    if not parts:
        return ""
    if len(parts) == 1:
        return " " + parts[0]
    sep = rng.choice([", ", " and ", "; "])
    return " " + sep.join(parts[:-1]) + rng.choice([" and ", ", "]) + parts[-1]


def choose_args(rng, pools, tool, fixed=None):
    """Arguments in schema order: all required ones plus some optional ones."""
    args = {}
    for n, spec in tool["params"].items():
        if fixed and n in fixed:
            args[n] = fixed[n]
        elif spec["required"] or rng.random() < 0.5:
            args[n] = gen_value(rng, pools, spec["kind"], spec)
    return args


def action_text(rng, tool, args, skip=()):
    verb_phrase = rng.choice(VERBS[tool["verb"]][0])
    art = rng.choice(["the ", "a ", "my ", ""])
    parts = [mention(rng, n, tool["params"][n], v) for n, v in args.items() if n not in skip]
    rng.shuffle(parts)
    return "%s %s%s%s" % (verb_phrase, art, tool["noun"], join_mentions(rng, parts))


def request_text(rng, actions):
    body = actions[0]
    for a in actions[1:]:
        body += rng.choice([", then ", " and then ", ". After that, ", ", and afterwards "]) + a
    form = rng.choice(["Please %s.", "Can you %s?", "I need you to %s.", "%s.", "Could you %s, please?",
                       "Hey, %s.", "I want to %s."])
    text = form % body
    return text[0].upper() + text[1:]


# ---------------------------------------------------------------------------------------------- results
def make_result(rng, pools, tool, must=None):
    keys = rng.sample(list(RESULT_FIELDS), rng.randint(1, 2))
    res = {k: gen_value(rng, pools, RESULT_FIELDS[k]) for k in keys}
    if must:
        res = dict(must, **{k: v for k, v in res.items() if k not in must})
    return res


def final_answer(rng, calls):
    """A short sentence that uses the last result."""
    tool, args, result = calls[-1]
    past = VERBS[tool["verb"]][1]
    head = rng.choice(["Done: the %s was %s.", "The %s has been %s.", "I %s the %s."])
    head = head % ((past, tool["noun"]) if head.startswith("I ") else (tool["noun"], past))
    facts = ["the %s is %s" % (phrase(k), v if not isinstance(v, bool) else str(v).lower())
             for k, v in list(result.items())[:2]]
    if len(calls) > 1:
        head = rng.choice(["All done.", "Both steps are done.", "Finished."]) + " " + head
    if not facts:
        return head
    text = "; ".join(facts)
    return head + " " + text[0].upper() + text[1:] + "."


# ---------------------------------------------------------------------------------------------- conversations
def call_msg(rng, tool, args):
    msg = {"role": "assistant", "tool_call": {"name": tool["name"], "arguments": args}}
    if args and rng.random() < 0.3:
        msg["pad"] = {k: rng.randint(1, 6) for k in args}
    return msg


def pick_tools(rng, pools, needed, n_total):
    """The needed tools plus distractors (some share the verb or noun), shuffled."""
    tools = list(needed)
    names = {t["name"] for t in tools}
    while len(tools) < n_total:
        base = rng.choice(needed) if needed else None
        r = rng.random()
        if base and r < 0.3:
            t = make_tool(rng, pools, noun=base["noun"], small=True)
        elif base and r < 0.5:
            t = make_tool(rng, pools, verb=base["verb"], small=True)
        else:
            t = make_tool(rng, pools, small=True)
        if t["name"] not in names:
            tools.append(t)
            names.add(t["name"])
    rng.shuffle(tools)
    return tools


def conv_calls(rng, pools, n_calls, dependent):
    needed = []
    while len(needed) < n_calls:
        t = make_tool(rng, pools, extra_kind="id" if dependent and needed else None)
        if t["name"] not in {x["name"] for x in needed}:
            needed.append(t)
    tools = pick_tools(rng, pools, needed, min(4, n_calls + rng.choice([0, 1, 1, 2])))
    plans, actions = [], []
    for i, t in enumerate(needed):
        fixed, skip = {}, ()
        if dependent and i > 0:
            id_name = next((n for n, s in t["params"].items() if s["kind"] == "id"), None)
            if id_name:
                fixed = {id_name: gen_value(rng, pools, "id")}
                skip = (id_name,)
        args = choose_args(rng, pools, t, fixed)
        plans.append((t, args, fixed))
        actions.append(action_text(rng, t, args, skip))
    messages = [{"role": "user", "content": request_text(rng, actions)}]
    calls = []
    for i, (t, args, _) in enumerate(plans):
        nxt = plans[i + 1][2] if i + 1 < len(plans) else None
        result = make_result(rng, pools, t, must=nxt)
        messages.append(call_msg(rng, t, args))
        messages.append({"role": "tool", "content": json.dumps(result, ensure_ascii=False)})
        calls.append((t, args, result))
    messages.append({"role": "assistant", "content": final_answer(rng, calls)})
    return tools, messages


def conv_no_call(rng, pools):
    tools = pick_tools(rng, pools, [], rng.randint(0, 3))
    r = rng.random()
    if r < 0.35:
        user = rng.choice(["Hi!", "Hello there.", "Good morning!", "Hey, how are you?", "Thanks!", "Thank you.",
                           "Great, thanks a lot."])
        reply = rng.choice(["Hello! How can I help you today?", "You're welcome!", "Happy to help.",
                            "Hi! What can I do for you?"])
    elif r < 0.6 and tools:
        user = rng.choice(["What can you do?", "Which tools do you have?", "What tools are available?"])
        reply = "I can use these tools: " + ", ".join(t["name"] for t in tools) + "."
    else:
        used = {(t["verb"], t["noun"]) for t in tools}
        while True:
            verb, noun = rng.choice(list(VERBS)), pools.pick(rng, pools.nouns, "noun")
            if (verb, noun) not in used:
                break
        fake = {"verb": verb, "noun": noun, "params": {}}
        user = request_text(rng, [action_text(rng, fake, {})])
        reply = "Sorry, none of my tools can %s %s." % (verb, noun)
    return tools, [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]


def make_conversation(rng, pools):
    r = rng.random()
    if r < 0.12:
        tools, messages = conv_no_call(rng, pools)
    elif r < 0.62:
        tools, messages = conv_calls(rng, pools, 1, False)
    elif r < 0.77:
        tools, messages = conv_calls(rng, pools, 2, True)
    elif r < 0.92:
        tools, messages = conv_calls(rng, pools, 2, False)
    else:
        tools, messages = conv_calls(rng, pools, 3, rng.random() < 0.5)
    return {"system": rng.choice(SYSTEMS), "tools": [t["schema"] for t in tools], "messages": messages}


def generate(split, n, seed, synth=0.0):
    rng = random.Random("%s:%d" % (split, seed))
    pools = Pools(split, synth)
    return [make_conversation(rng, pools) for _ in range(n)]


# ---------------------------------------------------------------------------------------------- copy drills
def value_text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def conv_drill(rng, pools):
    """A conversation whose answer copies from the request: an echo of a request, the value of one
    argument the request states, or a call of a tool the request names literally."""
    r = rng.random()
    if r < 0.35:
        t = make_tool(rng, pools)
        text = action_text(rng, t, choose_args(rng, pools, t))
        tools = pick_tools(rng, pools, [t], rng.randint(0, 2)) if rng.random() < 0.5 else []
        user = rng.choice(["Repeat exactly: %s", "Say back: %s", "Echo this: %s", "Copy this text: %s"]) % text
        return tools, [{"role": "user", "content": user}, {"role": "assistant", "content": text}]
    if r < 0.65:
        while True:
            t = make_tool(rng, pools)
            args = choose_args(rng, pools, t)
            if args:
                break
        k = rng.choice(list(args))
        user = request_text(rng, [action_text(rng, t, args)]) + " " + rng.choice(
            ["What %s did I give?", "Which %s did I say?", "Tell me the %s I gave."]) % phrase(k)
        return [], [{"role": "user", "content": user}, {"role": "assistant", "content": value_text(args[k])}]
    t = make_tool(rng, pools)
    args = choose_args(rng, pools, t)
    tools = pick_tools(rng, pools, [t], rng.randint(1, 4))
    parts = [mention(rng, n, t["params"][n], v) for n, v in args.items()]
    rng.shuffle(parts)
    user = rng.choice(["Call %s%s.", "Use %s%s.", "Run the tool %s%s."]) % (t["name"], join_mentions(rng, parts))
    return tools, [{"role": "user", "content": user}, call_msg(rng, t, args)]


def generate_drills(n, seed):
    """Training-split copy drills (their own random stream: the conversations above are unchanged)."""
    rng = random.Random("drill:%d" % seed)
    pools = Pools("train")
    out = []
    for _ in range(n):
        tools, messages = conv_drill(rng, pools)
        out.append({"system": rng.choice(SYSTEMS), "tools": [t["schema"] for t in tools], "messages": messages})
    return out


# ---------------------------------------------------------------------------------------------- mini calls
def conv_mini(rng, pools):
    """A short call-only conversation for a first training stage: one tool of 2-4 parameters (so most requests
    state several values the call must put under the right keys), no system text, a request that states the
    arguments, and the call; no result or final answer."""
    t = make_tool(rng, pools)
    params, names, required = {}, [], []
    while len(params) < 2:
        params, names, required = make_params(rng, pools, sample_kinds(rng, rng.randint(2, 4)))
    t["params"] = params
    t["schema"]["parameters"] = {"type": "object", "properties": {n: params[n]["schema"] for n in names},
                                 "required": required}
    args = choose_args(rng, pools, t)
    messages = [{"role": "user", "content": request_text(rng, [action_text(rng, t, args)])}, call_msg(rng, t, args)]
    return {"system": "", "tools": [t["schema"]], "messages": messages}


def generate_mini(n, seed, synth):
    """Training-split mini conversations (their own random stream)."""
    rng = random.Random("mini:%d" % seed)
    pools = Pools("train", synth)
    return [conv_mini(rng, pools) for _ in range(n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--train", type=int, default=60000)
    ap.add_argument("--heldout", type=int, default=600)
    ap.add_argument("--drills", type=float, default=0.0,
                    help="add this fraction of --train as copy drills to the training split (echo a request, "
                         "state an argument value, call a tool named literally); default 0")
    ap.add_argument("--synth", type=float, default=0.0,
                    help="in the training split, draw each tool noun, parameter name, person name, city and word "
                         "as a made-up pseudo-word with this probability (held-out split unchanged); default 0")
    ap.add_argument("--mini", type=int, default=0,
                    help="write DIR/train.jsonl with this many short call-only conversations instead (one tool of 2-4 "
                         "parameters, no system text, no result: a first training stage on short prompts); no "
                         "held-out split")
    a = ap.parse_args()
    if a.mini:
        with open("%s/train.jsonl" % a.out, "w") as f:
            for c in generate_mini(a.mini, a.seed, a.synth):
                f.write(json.dumps(c, ensure_ascii=False) + "\n")
        return
    for split, n in (("train", a.train), ("heldout", a.heldout)):
        convs = generate(split, n, a.seed, a.synth if split == "train" else 0.0)
        if split == "train" and a.drills > 0:  # appended: bpe.py reads the first conversations, train.py shuffles
            convs += generate_drills(int(a.drills * n), a.seed)
        with open("%s/%s.jsonl" % (a.out, split), "w") as f:
            for c in convs:
                f.write(json.dumps(c, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
