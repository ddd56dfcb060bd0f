"""Argument values for gen_real.py: how each parameter kind of the catalog draws a value and how a request says it
(numbers in words, quoted text, times, lists), the small text pools, and the JSON Schemas of list and object kinds.
Deterministic given the generator's random.Random. Split out of gen_real.py; the names are re-exported there."""

import argparse
import datetime as _dt
import json
import random
import re
import sys
import zlib
import catalog
import chat_format
import pools_real as P

# ---------------------------------------------------------------------------------------------- values
class Values:
    """Random values for tool results (catalog res= functions) and requests; `day` says dates."""

    def __init__(self, rng, day):
        self.rng, self.day, self.cur = rng, day, {}

    def int(self, lo, hi):
        return self.rng.randint(lo, hi)

    def num(self, lo, hi, nd=2):
        return round(self.rng.uniform(lo, hi), nd)

    def pick(self, items):
        return self.rng.choice(list(items))

    def date_offset(self, n):
        return (self.day.today + _dt.timedelta(days=n)).isoformat()

    def ident(self, prefix, digits=5):
        return P.ident(self.rng, prefix, digits)

    def hexid(self, n):
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))

    def person(self):
        return P.person(self.rng)

    def first(self):
        return self.rng.choice(P.FIRST)

    def email(self, name=None):
        return P.email_of(self.rng, name if name and " " in name else None)

    def phone(self):
        return P.phone(self.rng)

    def path(self, absolute=None):
        return P.path(self.rng, absolute)

    def subject(self):
        return self.pick(P.SUBJECTS)

    def body(self):
        return self.pick(P.BODIES)

    def event(self):
        return self.pick(P.EVENT_TITLES)

    def branch(self):
        return self.pick(P.BRANCHES)

    def commit(self):
        return self.pick(P.COMMIT_MSGS)

    def repo(self):
        return self.pick(P.REPOS)

    def issue_title(self):
        return self.pick(P.ISSUE_TITLES)

    def note(self):
        return self.pick(P.NOTE_TEXTS)

    def task(self):
        return self.pick(P.TASK_TITLES)

    def city(self):
        return self.pick(P.CITIES)

    def company(self):
        return self.pick(P.COMPANIES)

    def product(self):
        return self.pick(P.PRODUCTS)

    def url(self):
        return self.pick(URLS)

    def fact(self):
        return self.pick(FACTS)

    def headline(self, topic=None):
        h = self.pick(HEADLINES)
        return h if not topic or self.rng.random() < 0.5 else "%s: %s" % (topic[:1].upper() + topic[1:], h)

    def passage(self):
        return self.pick(PASSAGES)

    def file_text(self, path=None):
        return self.pick(FILE_TEXTS)

    def listing(self):
        return self.rng.sample(P.FILES, 3)

    def price(self, lo=5, hi=500):
        return round(self.rng.uniform(lo, hi), 2)

    def eval(self, expr):
        try:
            if re.fullmatch(r"[0-9+\-*/(). ^%]+", expr):
                v = eval(expr.replace("^", "**"), {"__builtins__": {}})
                return round(v, 6) if isinstance(v, float) else v
        except Exception:
            pass
        return self.int(1, 1000)


URLS = ["https://example.com", "https://news.ycombinator.com", "https://en.wikipedia.org/wiki/Diffusion_model",
        "https://docs.python.org/3/library/json.html", "https://github.com/facebook/react/releases",
        "https://www.bbc.com/news/technology", "https://api.example.com/v1/status", "https://blog.acme.com/pricing",
        "http://localhost:8080/health", "https://httpbin.org/get", "https://www.nytimes.com/section/science"]
FACTS = ["works at Acme Corp", "prefers morning meetings", "lives in Lyon", "is allergic to peanuts",
         "plays the guitar", "manages the data team", "has a dog called Rex", "speaks Japanese"]
HEADLINES = ["Central bank holds interest rates steady", "New battery design doubles range of electric cars",
             "Heatwave expected across southern Europe", "Open-source model tops coding benchmark",
             "City council approves new bike lanes", "Scientists map the deepest coral reef yet"]
PASSAGES = ["The warranty covers manufacturing defects for two years from the date of purchase.",
            "To reset the router, hold the reset button for ten seconds until the light blinks.",
            "Refunds are processed within 5 business days after the returned item arrives.",
            "The API rate limit is 100 requests per minute per key."]
FILE_TEXTS = ["# Project\n\nA small web app.\n", "name: api\nport: 8080\ndebug: false\n",
              "id,name,total\n1,Ada,42.50\n2,Lin,17.00\n", "TODO:\n- write tests\n- update docs\n"]
WORDS = ["invoice", "budget", "launch", "contract", "interview", "travel", "onboarding", "roadmap", "feedback",
         "renewal", "security", "hiring", "offsite", "migration", "release"]
TEXTS = ["Running 10 minutes late", "Lunch is on me today", "The build is green again", "See you at the gym",
         "Remember the rent is due Friday", "Great job on the demo!", "Can you review my PR?", "Meeting moved to 3pm"]
LABEL_LIST = P.LABELS


def said_number(rng, n):
    if isinstance(n, int) and 0 <= n <= 20 and rng.random() < 0.3:
        return P.number_words(n)
    if isinstance(n, int) and 20 < n < 100 and rng.random() < 0.12:
        return P.number_words(n)
    return str(n)


def quoted(rng, s, p=0.35):
    r = rng.random()
    if r < p:
        return '"%s"' % s
    if r < p + 0.08:
        return "'%s'" % s
    return s


def said_time(rng, h, m):
    v = "%02d:%02d" % (h, m)
    r = rng.random()
    if r < 0.45:
        return v, v
    h12 = h % 12 or 12
    ap = "am" if h < 12 else "pm"
    if m == 0:
        return v, rng.choice(["%d%s" % (h12, ap), "%d %s" % (h12, ap), "%d:00 %s" % (h12, ap.upper())])
    return v, rng.choice(["%d:%02d%s" % (h12, m, ap), "%d:%02d %s" % (h12, m, ap)])


def join_list(rng, items):
    items = [str(i) for i in items]
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + rng.choice([" and ", ", and ", " & "]) + items[-1] if rng.random() < 0.8 \
        else ", ".join(items)


# kind -> (schema extras, value function (g, arg, param name) -> (value, said))
def _v_word(g, arg, pname):
    rng = g.rng
    if pname in ("owner", "repo", "project_id", "repository"):
        repo = g.cur.setdefault("repo", g.repo())
        owner, name = repo.split("/")
        if pname == "owner":
            return owner, owner
        if pname == "repo":
            return name, name
        return repo, repo
    if pname in ("username", "assignees", "user", "reviewer"):
        u = g.first().lower()
        return u, u
    if pname == "query" or pname == "q":
        w = rng.choice(WORDS + [g.first(), g.company()])
        return w, quoted(rng, w, 0.2)
    w = rng.choice(WORDS)
    return w, w


def _v_simple(pool):
    def f(g, arg, pname):
        v = g.pick(pool() if callable(pool) else pool)
        return v, v
    return f


def _v_quoted(pool, p=0.35):
    def f(g, arg, pname):
        v = g.pick(pool() if callable(pool) else pool)
        return v, quoted(g.rng, v, p)
    return f


def _v_int(g, arg, pname):
    lo, hi = [int(x) for x in arg.split(",")]
    n = g.rng.randint(lo, hi)
    if hi - lo > 30 and g.rng.random() < 0.6:  # round numbers are what people ask for
        step = 10 if hi <= 1000 else 100
        n = max(lo, min(hi, round(n / step) * step)) or lo
    return n, said_number(g.rng, n)


def _v_num(g, arg, pname):
    lo, hi = [float(x) for x in arg.split(",")]
    r = g.rng.random()
    v = float(g.rng.randint(int(lo), int(hi))) if r < 0.4 else round(g.rng.uniform(lo, hi), 1 if r < 0.7 else 2)
    if v == int(v) and r < 0.4:
        return int(v), said_number(g.rng, int(v))
    return v, str(v)


def _v_date(g, arg, pname, future=True):
    iso, says = g.day.pick(g.rng, future)
    g.cur["uses_date"] = True
    return iso, g.rng.choice(says)


def _v_time(g, arg, pname):
    return said_time(g.rng, g.rng.choice([7, 8, 9, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]),
                     g.rng.choice([0, 0, 0, 15, 30, 30, 45]))


def _v_tz(g, arg, pname):
    city = g.pick(P.TIMEZONES)
    tz = P.TIMEZONES[city]
    return tz, tz if g.rng.random() < 0.45 else city


def _v_email(g, arg, pname):
    name = g.cur.get("person") if pname in ("email",) and g.cur.get("person") else None
    e = P.email_of(g.rng, name)
    return e, e


def _v_person(g, arg, pname):
    p = g.person()
    g.cur["person"] = p
    return p, p


def _v_country_code(g, arg, pname):
    c = g.pick(P.COUNTRY_CODES)
    code = P.COUNTRY_CODES[c]
    return code, code if g.rng.random() < 0.3 else c


def _v_lang(g, arg, pname):
    code = g.pick(P.LANGUAGES)
    return code, P.LANGUAGES[code] if g.rng.random() < 0.75 else code


def _v_currency(g, arg, pname):
    code = g.pick(P.CURRENCIES)
    return code, g.rng.choice(P.CURRENCIES[code] + [code])


def _v_crypto(g, arg, pname):
    code = g.pick(P.CRYPTO)
    return code, g.rng.choice(P.CRYPTO[code])


def _v_ticker(g, arg, pname):
    t = g.pick(P.STOCKS)
    return t, t if g.rng.random() < 0.5 else P.STOCKS[t]


def _v_airport(g, arg, pname):
    a = g.pick(P.AIRPORTS)
    return a, a if g.rng.random() < 0.6 else "%s (%s)" % (P.AIRPORTS[a], a)


def _v_unit(g, arg, pname):
    cat = arg or g.pick(P.UNITS)
    u = g.pick(P.UNITS[cat])
    return u, g.rng.choice(P.UNIT_WORDS.get(u, [u]))


def _v_id(g, arg, pname):
    prefix, digits = arg.split(",")
    v = P.ident(g.rng, prefix, int(digits))
    return v, v


def _v_amount(g, arg, pname):
    v = g.rng.choice([g.rng.randint(5, 500), g.rng.randint(1, 99) * 10, round(g.rng.uniform(1, 300), 2)])
    return v, str(v) if not isinstance(v, int) else said_number(g.rng, v)


def _v_hex(g, arg, pname):
    v = g.hexid(g.rng.choice([7, 7, 8, 12]))
    return v, v


def _v_path_abs(g, arg, pname):
    v = P.path(g.rng, True)
    return v, v


def _v_path(g, arg, pname):
    v = P.path(g.rng)
    return v, v


def _v_path_rel(g, arg, pname):
    v = P.path(g.rng, False)
    return v, v


def _v_dir(g, arg, pname):
    v = P.dir_path(g.rng, True)
    return v, v


def _v_dir_rel(g, arg, pname):
    v = P.dir_path(g.rng, False)
    return v, v


def _v_glob(g, arg, pname):
    v = g.pick(["*.py", "*.md", "*.log", "*.csv", "**/*.ts", "test_*.py", "*.json", "report*"])
    return v, v


def _v_sql(g, arg, pname):
    v = P.sql_query(g.rng)
    return v, quoted(g.rng, v, 0.4)


def _v_table(g, arg, pname):
    v = g.pick(P.DB_TABLES)
    return v, v


def _v_expr(g, arg, pname):
    a, b, c = g.rng.randint(2, 99), g.rng.randint(2, 99), g.rng.randint(2, 12)
    v = g.pick(["%d * %d" % (a, b), "%d + %d * %d" % (a, b, c), "(%d + %d) / %d" % (a, b, c), "%d ^ 2" % c,
                "%d * 1.609344" % a, "%d / 2.54" % a, "%d * 0.15" % (a * 10)])
    return v, v


def _v_argv(g, arg, pname):
    v = g.pick([["ls", "-l"], ["git", "status"], ["python3", "--version"], ["df", "-h"], ["cat", "README.md"],
                ["grep", "-r", "TODO", "src"], ["make", "test"], ["du", "-sh", "."]])
    return v, " ".join(v) if g.rng.random() < 0.6 else "`%s`" % " ".join(v)


def _v_edits(g, arg, pname):
    old, new = g.pick([("debug: true", "debug: false"), ("port: 8080", "port: 9090"), ("TODO", "DONE"),
                       ("version = 1.0", "version = 1.1"), ("localhost", "0.0.0.0")])
    return [{"oldText": old, "newText": new}], "%s with %s" % (quoted(g.rng, old, 0.6), quoted(g.rng, new, 0.6))


def _v_entities(g, arg, pname):
    p, f = g.person(), g.fact()
    return [{"name": p, "entityType": "person", "observations": [f]}], "%s %s" % (p, f)


def _v_relations(g, arg, pname):
    a, b = g.person(), g.company()
    r = g.pick(["works_at", "manages", "founded"])
    return [{"from": a, "to": b, "relationType": r}], "%s %s %s" % (a, r.replace("_", " "), b)


def _v_observations(g, arg, pname):
    p, f = g.person(), g.fact()
    return [{"entityName": p, "contents": [f]}], "%s: %s" % (p, f)


def _v_address(g, arg, pname):
    n, st, city = g.rng.randint(1, 250), g.pick(P.STREETS), g.city()
    z = "%05d" % g.rng.randint(1000, 99999)
    return {"street": "%d %s" % (n, st), "city": city, "postal_code": z}, "%d %s, %s %s" % (n, st, city, z)


def _v_items(g, arg, pname):
    k = g.rng.randint(1, 3)
    skus = g.rng.sample(P.SKUS, k)
    items = [{"sku": s, "quantity": g.rng.randint(1, 4)} for s in skus]
    return items, join_list(g.rng, ["%s x %s" % (said_number(g.rng, i["quantity"]), i["sku"]) for i in items])


def _v_text(g, arg, pname):
    v = g.pick(TEXTS + P.NOTE_TEXTS[:6])
    return v, quoted(g.rng, v, 0.55)


def _v_key(g, arg, pname):
    v = g.pick(["triage/ada@example.com", "last_run", "user:42:prefs", "project/status", "todo", "config.theme"])
    return v, v


KINDS = {
    "word": ("string", _v_word),
    "city": ("string", _v_simple(P.CITIES)),
    "country": ("string", _v_simple(P.COUNTRIES)),
    "person": ("string", _v_person),
    "first": ("string", _v_simple(P.FIRST)),
    "email": ("string", _v_email),
    "phone": ("string", lambda g, a, n: (lambda v: (v, v))(g.phone())),
    "path": ("string", _v_path),
    "path_abs": ("string", _v_path_abs),
    "path_rel": ("string", _v_path_rel),
    "dir": ("string", _v_dir),
    "dir_rel": ("string", _v_dir_rel),
    "glob": ("string", _v_glob),
    "date": ("string", _v_date),
    "date_past": ("string", lambda g, a, n: _v_date(g, a, n, False)),
    "time": ("string", _v_time),
    "tz": ("string", _v_tz),
    "int": ("integer", _v_int),
    "num": ("number", _v_num),
    "amount": ("number", _v_amount),
    "id": ("string", _v_id),
    "hex": ("string", _v_hex),
    "bool": ("boolean", None),
    "enum": ("string", None),
    "arr": ("array", None),
    "text": ("string", _v_text),
    "body": ("string", _v_quoted(P.BODIES, 0.4)),
    "subject": ("string", _v_quoted(P.SUBJECTS, 0.35)),
    "commit": ("string", _v_quoted(P.COMMIT_MSGS, 0.45)),
    "note": ("string", _v_quoted(P.NOTE_TEXTS, 0.45)),
    "task": ("string", _v_quoted(P.TASK_TITLES, 0.35)),
    "event": ("string", _v_quoted(P.EVENT_TITLES, 0.3)),
    "issue_title": ("string", _v_quoted(P.ISSUE_TITLES, 0.45)),
    "branch": ("string", _v_simple(P.BRANCHES)),
    "label": ("string", _v_simple(P.LABELS)),
    "database": ("string", _v_simple(P.DATABASES)),
    "table": ("string", _v_table),
    "sql": ("string", _v_sql),
    "url": ("string", _v_simple(URLS)),
    "key": ("string", _v_key),
    "place": ("string", _v_simple(P.PLACES)),
    "company": ("string", _v_simple(P.COMPANIES)),
    "country_code": ("string", _v_country_code),
    "lang": ("string", _v_lang),
    "currency": ("string", _v_currency),
    "crypto": ("string", _v_crypto),
    "ticker": ("string", _v_ticker),
    "airport": ("string", _v_airport),
    "unit": ("string", _v_unit),
    "product": ("string", _v_simple(P.PRODUCTS)),
    "sku": ("string", _v_simple(P.SKUS)),
    "song": ("string", _v_quoted(list(P.SONGS), 0.3)),
    "artist": ("string", _v_simple(P.ARTISTS)),
    "genre": ("string", _v_simple(P.GENRES)),
    "playlist": ("string", _v_quoted(P.PLAYLISTS, 0.3)),
    "room": ("string", _v_simple(P.ROOMS)),
    "device": ("string", _v_simple(P.DEVICES)),
    "host": ("string", _v_simple(P.HOSTS)),
    "namespace": ("string", _v_simple(P.NAMESPACES)),
    "service": ("string", _v_simple(P.SERVICES)),
    "image": ("string", _v_simple(P.IMAGES)),
    "region": ("string", _v_simple(P.REGIONS)),
    "channel": ("string", lambda g, a, n: (lambda c: (c, g.rng.choice([c, "#" + c])))(g.pick(P.CHANNELS))),
    "team": ("string", _v_simple(P.TEAMS)),
    "league": ("string", _v_simple(P.LEAGUES)),
    "dish": ("string", _v_simple(P.DISHES)),
    "ingredient": ("string", _v_simple(P.INGREDIENTS)),
    "cuisine": ("string", _v_simple(P.CUISINES)),
    "exercise": ("string", _v_simple(P.EXERCISES)),
    "carrier": ("string", _v_simple(P.CARRIERS)),
    "department": ("string", _v_simple(P.DEPARTMENTS)),
    "job_title": ("string", _v_simple(P.JOB_TITLES)),
    "news": ("string", _v_simple(P.NEWS_TOPICS)),
    "search": ("string", _v_quoted(P.SEARCH_QUERIES, 0.3)),
    "wiki": ("string", _v_simple(["Marie Curie", "the Eiffel Tower", "photosynthesis", "the Roman Empire",
                                  "black holes", "Ada Lovelace", "the Great Barrier Reef", "jazz"])),
    "doc_question": ("string", _v_simple(["how do I reset my password", "what is the refund policy",
                                          "how to configure the API key", "what are the rate limits",
                                          "how long is the warranty"])),
    "expr": ("string", _v_expr),
    "argv": ("array", _v_argv),
    "edits": ("array", _v_edits),
    "entities": ("array", _v_entities),
    "relations": ("array", _v_relations),
    "observations": ("array", _v_observations),
    "address": ("object", _v_address),
    "items": ("array", _v_items),
}

ITEM_SCHEMAS = {
    "edits": {"type": "object", "properties": {"oldText": {"type": "string", "description": "Text to search for - must match exactly"},
                                                "newText": {"type": "string", "description": "Text to replace with"}},
              "required": ["oldText", "newText"]},
    "entities": {"type": "object", "properties": {"name": {"type": "string", "description": "The name of the entity"},
                                                   "entityType": {"type": "string", "description": "The type of the entity"},
                                                   "observations": {"type": "array", "items": {"type": "string"},
                                                                    "description": "Observations about the entity"}},
                 "required": ["name", "entityType", "observations"]},
    "relations": {"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"},
                                                    "relationType": {"type": "string"}},
                  "required": ["from", "to", "relationType"]},
    "observations": {"type": "object", "properties": {"entityName": {"type": "string"},
                                                       "contents": {"type": "array", "items": {"type": "string"}}},
                     "required": ["entityName", "contents"]},
    "items": {"type": "object", "properties": {"sku": {"type": "string", "description": "Product SKU"},
                                                "quantity": {"type": "integer", "minimum": 1}},
              "required": ["sku", "quantity"]},
    "argv": {"type": "string"},
}
OBJECT_SCHEMAS = {
    "address": {"properties": {"street": {"type": "string"}, "city": {"type": "string"},
                               "postal_code": {"type": "string"}}, "required": ["street", "city"]},
}


