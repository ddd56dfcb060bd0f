"""Realistic value pools for gen_real.py: names, places, products, paths, ids... (no pseudo-words).

Every pool is a plain list; gen_real.py draws from them with a seeded random.Random. A kind (catalog.py's parameter
kinds) maps to a generator function in KINDS: kind -> fn(rng) -> (value, [ways to say it in a request]).
"""
import datetime as _dt

FIRST = """James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara Richard Susan Joseph
Jessica Thomas Sarah Charles Karen Daniel Lisa Matthew Nancy Anthony Betty Mark Sandra Steven Ashley Paul Emily Andrew
Kimberly Joshua Michelle Kevin Amanda Brian Melissa George Stephanie Timothy Rebecca Ryan Laura Jacob Amy Nicholas
Angela Eric Anna Jonathan Ruth Justin Olivia Scott Emma Brandon Sophia Samuel Chloe Benjamin Grace Ethan Hannah Noah
Zoe Liam Ava Lucas Mia Oliver Isabella Mateo Camila Diego Lucia Carlos Sofia Javier Elena Pablo Ines Hugo Lea Louis
Camille Jules Manon Luca Giulia Marco Chiara Matteo Francesca Lukas Lena Jonas Anna Felix Marie Finn Clara Sven Ingrid
Lars Astrid Mikko Aino Piotr Zofia Jakub Katarzyna Tomas Petra Ivan Olga Dmitri Anastasia Mehmet Ayse Emre Zeynep Omar
Fatima Ahmed Layla Yusuf Amira Ravi Priya Arjun Ananya Rahul Deepika Wei Li Jun Mei Hiroshi Yuki Kenji Sakura Minjun
Jiwoo Kwame Ama Chinedu Ngozi Tendai Amara Thabo Zanele Aroha Tane Mateus Beatriz Rafael Larissa""".split()
LAST = """Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson
Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis Robinson Walker
Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell Carter
Roberts Dubois Moreau Laurent Lefebvre Rossi Russo Ferrari Esposito Bianchi Muller Schmidt Schneider Fischer Weber
Becker Hoffmann Jensen Nielsen Hansen Larsen Andersson Johansson Nilsson Virtanen Korhonen Nowak Kowalski Wisniewska
Novak Svoboda Ivanov Petrova Yilmaz Kaya Demir Haddad Khalil Mansour Patel Sharma Singh Gupta Iyer Chen Wang Zhang Liu
Tanaka Suzuki Sato Yamamoto Kim Park Choi Mensah Okafor Adeyemi Nkosi Dlamini Moyo Silva Santos Oliveira Costa Pereira
OBrien Murphy Kelly Walsh Byrne Fernandez Alvarez Romero Navarro""".split()
CITIES = """New York|Los Angeles|Chicago|Houston|Phoenix|Philadelphia|San Antonio|San Diego|Dallas|Austin|Seattle|Denver|
Boston|Miami|Atlanta|Portland|San Francisco|Toronto|Vancouver|Montreal|Mexico City|London|Paris|Berlin|Madrid|Rome|
Lisbon|Amsterdam|Brussels|Vienna|Prague|Warsaw|Budapest|Athens|Dublin|Edinburgh|Manchester|Barcelona|Milan|Munich|
Hamburg|Zurich|Geneva|Copenhagen|Stockholm|Oslo|Helsinki|Reykjavik|Istanbul|Cairo|Nairobi|Lagos|Accra|Cape Town|
Johannesburg|Casablanca|Dubai|Doha|Tel Aviv|Mumbai|Delhi|Bangalore|Chennai|Karachi|Dhaka|Bangkok|Singapore|
Kuala Lumpur|Jakarta|Manila|Hanoi|Ho Chi Minh City|Hong Kong|Shanghai|Beijing|Taipei|Seoul|Busan|Tokyo|Osaka|Kyoto|
Sydney|Melbourne|Brisbane|Perth|Auckland|Wellington|Buenos Aires|Santiago|Lima|Bogota|Sao Paulo|Rio de Janeiro|
Lyon|Marseille|Nice|Bordeaux|Seville|Valencia|Porto|Naples|Florence|Venice|Krakow|Gdansk|Tallinn|Riga|Vilnius""".replace(
    "\n", "").split("|")
COUNTRIES = """United States|Canada|Mexico|Brazil|Argentina|United Kingdom|France|Germany|Spain|Italy|Portugal|
Netherlands|Belgium|Switzerland|Austria|Poland|Sweden|Norway|Denmark|Finland|Ireland|Greece|Turkey|Egypt|Kenya|
Nigeria|South Africa|India|China|Japan|South Korea|Australia|New Zealand|Singapore|Thailand|Vietnam|Indonesia""".replace(
    "\n", "").split("|")
COUNTRY_CODES = {"United States": "US", "Canada": "CA", "Mexico": "MX", "Brazil": "BR", "Argentina": "AR",
                 "United Kingdom": "GB", "France": "FR", "Germany": "DE", "Spain": "ES", "Italy": "IT",
                 "Portugal": "PT", "Netherlands": "NL", "Belgium": "BE", "Switzerland": "CH", "Austria": "AT",
                 "Poland": "PL", "Sweden": "SE", "Norway": "NO", "Denmark": "DK", "Finland": "FI", "Ireland": "IE",
                 "Greece": "GR", "Turkey": "TR", "Egypt": "EG", "Kenya": "KE", "Nigeria": "NG", "South Africa": "ZA",
                 "India": "IN", "China": "CN", "Japan": "JP", "South Korea": "KR", "Australia": "AU",
                 "New Zealand": "NZ", "Singapore": "SG", "Thailand": "TH", "Vietnam": "VN", "Indonesia": "ID"}
# city -> IANA zone, for convert_time and the like ("Tokyo time" -> "Asia/Tokyo": a value to convert)
TIMEZONES = {"New York": "America/New_York", "Los Angeles": "America/Los_Angeles", "Chicago": "America/Chicago",
             "Denver": "America/Denver", "Toronto": "America/Toronto", "Mexico City": "America/Mexico_City",
             "Sao Paulo": "America/Sao_Paulo", "London": "Europe/London", "Paris": "Europe/Paris",
             "Berlin": "Europe/Berlin", "Madrid": "Europe/Madrid", "Rome": "Europe/Rome",
             "Amsterdam": "Europe/Amsterdam", "Stockholm": "Europe/Stockholm", "Warsaw": "Europe/Warsaw",
             "Athens": "Europe/Athens", "Istanbul": "Europe/Istanbul", "Cairo": "Africa/Cairo",
             "Nairobi": "Africa/Nairobi", "Lagos": "Africa/Lagos", "Johannesburg": "Africa/Johannesburg",
             "Dubai": "Asia/Dubai", "Mumbai": "Asia/Kolkata", "Delhi": "Asia/Kolkata", "Bangkok": "Asia/Bangkok",
             "Singapore": "Asia/Singapore", "Hong Kong": "Asia/Hong_Kong", "Shanghai": "Asia/Shanghai",
             "Tokyo": "Asia/Tokyo", "Seoul": "Asia/Seoul", "Sydney": "Australia/Sydney",
             "Auckland": "Pacific/Auckland", "Lisbon": "Europe/Lisbon", "Dublin": "Europe/Dublin"}
AIRPORTS = {"JFK": "New York", "LAX": "Los Angeles", "ORD": "Chicago", "SFO": "San Francisco", "SEA": "Seattle",
            "BOS": "Boston", "MIA": "Miami", "ATL": "Atlanta", "DEN": "Denver", "YYZ": "Toronto",
            "LHR": "London", "CDG": "Paris", "FRA": "Frankfurt", "MAD": "Madrid", "FCO": "Rome", "AMS": "Amsterdam",
            "LIS": "Lisbon", "DUB": "Dublin", "ZRH": "Zurich", "CPH": "Copenhagen", "IST": "Istanbul",
            "DXB": "Dubai", "DOH": "Doha", "BOM": "Mumbai", "DEL": "Delhi", "SIN": "Singapore", "HKG": "Hong Kong",
            "NRT": "Tokyo", "ICN": "Seoul", "SYD": "Sydney", "MEL": "Melbourne", "AKL": "Auckland",
            "GRU": "Sao Paulo", "MEX": "Mexico City", "BCN": "Barcelona", "MUC": "Munich", "VIE": "Vienna"}
CURRENCIES = {"USD": ["US dollars", "dollars", "USD", "bucks"], "EUR": ["euros", "EUR", "euro"],
              "GBP": ["British pounds", "pounds", "GBP", "pounds sterling"], "JPY": ["Japanese yen", "yen", "JPY"],
              "CHF": ["Swiss francs", "CHF"], "CAD": ["Canadian dollars", "CAD"], "AUD": ["Australian dollars", "AUD"],
              "CNY": ["Chinese yuan", "yuan", "CNY"], "INR": ["Indian rupees", "rupees", "INR"],
              "MXN": ["Mexican pesos", "pesos", "MXN"], "BRL": ["Brazilian reais", "BRL"],
              "SEK": ["Swedish kronor", "SEK"], "NOK": ["Norwegian kroner", "NOK"], "PLN": ["Polish zloty", "PLN"],
              "KRW": ["South Korean won", "won", "KRW"], "SGD": ["Singapore dollars", "SGD"],
              "TRY": ["Turkish lira", "TRY"], "ZAR": ["South African rand", "rand", "ZAR"]}
STOCKS = {"AAPL": "Apple", "MSFT": "Microsoft", "GOOGL": "Alphabet", "AMZN": "Amazon", "NVDA": "Nvidia",
          "META": "Meta", "TSLA": "Tesla", "NFLX": "Netflix", "IBM": "IBM", "ORCL": "Oracle", "INTC": "Intel",
          "AMD": "AMD", "DIS": "Disney", "KO": "Coca-Cola", "PEP": "PepsiCo", "NKE": "Nike", "JPM": "JPMorgan",
          "V": "Visa", "WMT": "Walmart", "SAP": "SAP", "ASML": "ASML", "TM": "Toyota", "SONY": "Sony",
          "SHOP": "Shopify", "UBER": "Uber", "ABNB": "Airbnb", "SPOT": "Spotify", "ADBE": "Adobe"}
CRYPTO = {"BTC": ["bitcoin", "BTC"], "ETH": ["ethereum", "ether", "ETH"], "SOL": ["solana", "SOL"],
          "ADA": ["cardano", "ADA"], "XRP": ["ripple", "XRP"], "DOGE": ["dogecoin", "DOGE"],
          "DOT": ["polkadot", "DOT"], "LTC": ["litecoin", "LTC"], "AVAX": ["avalanche", "AVAX"]}
LANGUAGES = {"en": "English", "fr": "French", "de": "German", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
             "nl": "Dutch", "sv": "Swedish", "pl": "Polish", "tr": "Turkish", "ru": "Russian", "ja": "Japanese",
             "ko": "Korean", "zh": "Chinese", "ar": "Arabic", "hi": "Hindi", "el": "Greek", "fi": "Finnish"}
COMPANIES = """Acme Corp|Globex|Initech|Umbrella Health|Stark Logistics|Wayne Foods|Northwind Traders|Contoso|Fabrikam|
Tailspin Toys|Blue Yonder Airlines|Litware|Adventure Works|Proseware|Woodgrove Bank|Lucerne Publishing|Coho Winery|
Wide World Importers|Alpine Ski House|Fourth Coffee|Margie's Travel|Trey Research|Bluebird Analytics|Redwood Dental|
Harbor Freight Partners|Summit Legal|Pinecrest Realty|Brightside Solar|Oakridge Schools|Maple Leaf Bakery""".replace(
    "\n", "").split("|")
PRODUCTS = """wireless earbuds|running shoes|coffee grinder|standing desk|mechanical keyboard|yoga mat|air purifier|
electric toothbrush|hiking backpack|water bottle|office chair|4K monitor|bluetooth speaker|robot vacuum|espresso machine|
winter jacket|smart watch|phone case|desk lamp|cast iron skillet|noise cancelling headphones|USB-C charger|
laptop sleeve|rain boots|blender|e-reader|gaming mouse|wool socks|tent|sunglasses""".replace("\n", "").split("|")
SKUS = ["SKU-%s" % s for s in "10234 20981 33417 40026 51873 66120 70345 81992 90017 11456 23789 34561".split()]
STREETS = """Main Street|Oak Avenue|Maple Drive|Elm Street|Park Road|High Street|Church Lane|Station Road|Mill Lane|
Rue de Rivoli|Kastanienallee|Calle Mayor|Via Roma|King Street|Queen Street|Baker Street|Market Street|5th Avenue|
Sunset Boulevard|Harbour Road""".replace("\n", "").split("|")
PLACES = """the airport|the train station|downtown|the office|home|the museum|the nearest pharmacy|Central Park|
the Eiffel Tower|Times Square|the Colosseum|the Louvre|the city center|the university|the stadium|the beach|
the hospital|the mall|Union Station|the harbour""".replace("\n", "").split("|")
DIRS = ["docs", "src", "notes", "reports", "data", "projects/website", "inbox", "photos/2024", "invoices",
        "backups", "src/components", "tests", "config", "drafts", "downloads", "archive/2023", "scripts",
        "meeting-notes", "design", "research"]
FILES = ["README.md", "notes.txt", "todo.md", "report.pdf", "budget.xlsx", "data.csv", "config.yaml", "index.html",
         "main.py", "app.js", "package.json", "Dockerfile", "schema.sql", "invoice-0423.pdf", "summary.md",
         "changelog.md", "server.log", "settings.json", "requirements.txt", "Makefile", "roadmap.md", "q3-sales.csv",
         "contacts.csv", "style.css", "utils.ts", "minutes-2024-05-02.md", "draft.docx", "photo.jpg", "logo.png"]
ABS_ROOTS = ["/home/user", "/Users/alex", "/projects", "/data", "/srv/app", "/tmp", "/var/log", "/workspace"]
REPOS = ["facebook/react", "torvalds/linux", "rust-lang/rust", "python/cpython", "microsoft/vscode",
         "kubernetes/kubernetes", "acme/web-app", "acme/api-server", "openai/whisper", "vercel/next.js",
         "django/django", "pallets/flask", "golang/go", "nodejs/node", "tensorflow/tensorflow",
         "hashicorp/terraform", "acme/mobile-app", "octocat/hello-world", "grafana/grafana", "denoland/deno"]
BRANCHES = ["main", "develop", "feature/login-page", "fix/null-pointer", "release/2.4", "hotfix/payment-timeout",
            "feature/dark-mode", "chore/update-deps", "feature/search-api", "bugfix/date-parsing"]
ISSUE_TITLES = ["Login button does not respond on Safari", "Crash when uploading files larger than 2 GB",
                "Add dark mode to settings page", "Memory leak in websocket handler", "Typo in installation docs",
                "Search results are not sorted by date", "API returns 500 on empty payload",
                "Support for Python 3.13", "Flaky test in test_scheduler", "Slow page load on dashboard",
                "Broken link in README", "Password reset email never arrives", "Add CSV export for reports",
                "Timezone bug in calendar view", "Update dependencies to fix CVE-2024-3094"]
LABELS = ["bug", "enhancement", "documentation", "good first issue", "help wanted", "performance", "security",
          "question", "wontfix", "duplicate", "ui", "backend"]
COMMIT_MSGS = ["Fix typo in README", "Add unit tests for parser", "Refactor auth middleware", "Bump version to 2.4.1",
               "Update dependencies", "Handle empty input in search", "Improve error messages",
               "Remove deprecated config option", "Add retry logic to HTTP client", "Fix date parsing in reports"]
EMAIL_DOMAINS = ["gmail.com", "outlook.com", "yahoo.com", "example.com", "acme.com", "company.org", "proton.me",
                 "hey.com", "icloud.com", "fastmail.com", "contoso.com", "globex.io"]
SUBJECTS = ["Quarterly report", "Meeting tomorrow", "Invoice #4821", "Project update", "Lunch on Friday?",
            "Re: contract draft", "Welcome aboard", "Vacation request", "Happy birthday!", "Feedback on the proposal",
            "Server maintenance tonight", "Your order has shipped", "Team offsite agenda", "Budget approval",
            "Interview schedule", "Follow-up from our call"]
BODIES = ["Hi, just checking in on the status of the report.", "Can we move our meeting to 3pm?",
          "Thanks for your help yesterday!", "Please find the invoice attached.", "I'll be out of office next week.",
          "The deployment went fine, no issues so far.", "Could you review the draft before Friday?",
          "Running 10 minutes late, sorry!", "Let's grab lunch on Thursday.", "The client approved the budget.",
          "Reminder: the team meeting starts at 10.", "Happy birthday! Hope you have a great day.",
          "I've pushed the fix to the staging branch.", "Can you send me the slides from today?",
          "The package arrived damaged, what should I do?", "Great job on the presentation!"]
NOTE_TEXTS = ["buy milk, eggs and bread", "call the dentist on Monday", "ideas for the blog: caching, testing",
              "pick up the dry cleaning", "Wi-Fi password is on the fridge", "renew passport before June",
              "book flights for the conference", "water the plants", "pay the electricity bill",
              "finish chapter 3 of the thesis", "send the contract to legal", "backup the laptop"]
TASK_TITLES = ["Prepare slides for Monday", "Review pull request 214", "Pay rent", "Book dentist appointment",
               "Write quarterly report", "Renew car insurance", "Clean the garage", "Update the resume",
               "Order new printer ink", "Plan team lunch", "Fix the leaking tap", "Send invoice to Globex",
               "Call mom", "Submit expense report", "Migrate database to Postgres 16"]
EVENT_TITLES = ["Team standup", "Dentist appointment", "Lunch with Sarah", "Project kickoff", "1:1 with manager",
                "Yoga class", "Quarterly review", "Flight to Berlin", "Parent-teacher meeting", "Design review",
                "Birthday dinner", "Sprint planning", "Doctor's appointment", "Coffee with Marco", "Board meeting"]
SONGS = {"Bohemian Rhapsody": "Queen", "Blinding Lights": "The Weeknd", "Shape of You": "Ed Sheeran",
         "Hotel California": "Eagles", "Billie Jean": "Michael Jackson", "Rolling in the Deep": "Adele",
         "Smells Like Teen Spirit": "Nirvana", "Bad Guy": "Billie Eilish", "Hey Jude": "The Beatles",
         "Levitating": "Dua Lipa", "Clocks": "Coldplay", "Halo": "Beyonce", "Take Five": "Dave Brubeck",
         "Clair de Lune": "Debussy", "Dancing Queen": "ABBA", "Wonderwall": "Oasis"}
ARTISTS = sorted(set(SONGS.values()) | {"Taylor Swift", "Miles Davis", "Daft Punk", "Radiohead", "Bach", "Drake",
                                        "Norah Jones", "Fleetwood Mac", "Kendrick Lamar", "Stromae"})
GENRES = ["jazz", "rock", "classical", "pop", "hip hop", "lo-fi", "blues", "electronic", "country", "reggae",
          "metal", "ambient", "soul", "folk"]
PLAYLISTS = ["Morning Run", "Focus", "Road Trip", "Chill Vibes", "Dinner Party", "Workout Mix", "Sleep", "Throwbacks"]
ROOMS = ["living room", "kitchen", "bedroom", "bathroom", "office", "garage", "hallway", "dining room",
         "kids room", "basement", "porch", "garden"]
DEVICES = ["ceiling light", "lamp", "thermostat", "tv", "fan", "heater", "air conditioner", "speaker",
           "coffee maker", "door lock", "garage door", "blinds", "robot vacuum", "sprinklers"]
HOSTS = ["web-01", "web-02", "db-primary", "db-replica-1", "cache-01", "worker-3", "api-gateway", "build-agent-7",
         "staging-app", "prod-api-2", "monitoring", "bastion"]
NAMESPACES = ["default", "production", "staging", "monitoring", "kube-system", "payments", "frontend", "data"]
SERVICES = ["checkout", "auth-service", "payment-api", "user-service", "search", "notifications", "inventory",
            "frontend", "recommendations", "billing-worker", "gateway", "email-sender"]
IMAGES = ["nginx:1.25", "redis:7", "postgres:16", "python:3.12-slim", "node:20-alpine", "acme/api:2.4.1",
          "grafana/grafana:10.2", "busybox:latest"]
REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-1", "ap-northeast-1"]
CHANNELS = ["general", "random", "engineering", "design", "marketing", "support", "incidents", "deployments",
            "sales", "announcements", "team-berlin", "product"]
DB_TABLES = {"customers": ["id", "name", "email", "country", "created_at"],
             "orders": ["id", "customer_id", "total", "status", "created_at"],
             "products": ["id", "name", "price", "stock", "category"],
             "employees": ["id", "name", "department", "salary", "hired_at"],
             "invoices": ["id", "customer_id", "amount", "due_date", "paid"],
             "events": ["id", "user_id", "type", "created_at"],
             "tickets": ["id", "subject", "priority", "status", "assignee"]}
DATABASES = ["sales", "analytics", "inventory", "hr", "crm", "app_production", "warehouse", "billing"]
NEWS_TOPICS = ["technology", "climate change", "the stock market", "elections", "artificial intelligence",
               "space exploration", "football", "electric cars", "the economy", "health", "renewable energy",
               "cybersecurity", "the Olympics", "housing prices"]
SEARCH_QUERIES = ["best pizza in Naples", "how to fix a leaking faucet", "python list comprehension examples",
                  "cheap flights to Lisbon", "symptoms of vitamin D deficiency", "how tall is Mount Everest",
                  "rust vs go performance", "easy vegetarian dinner ideas", "history of the Roman Empire",
                  "how to change a bike tire", "kubernetes pod crashloopbackoff", "best hiking trails near Denver",
                  "what is a roth ira", "how to make sourdough starter", "chess opening for beginners"]
DISHES = ["lasagna", "chicken curry", "pad thai", "guacamole", "banana bread", "ramen", "paella", "falafel",
          "tiramisu", "shakshuka", "beef stew", "mushroom risotto", "pancakes", "caesar salad", "tacos al pastor"]
INGREDIENTS = ["chicken", "tofu", "spinach", "mushrooms", "chickpeas", "salmon", "eggs", "rice", "potatoes",
               "tomatoes", "avocado", "lentils", "broccoli", "zucchini", "shrimp"]
CUISINES = ["italian", "mexican", "japanese", "indian", "thai", "french", "chinese", "greek", "korean", "lebanese"]
TEAMS = ["Real Madrid", "FC Barcelona", "Manchester United", "Liverpool", "Bayern Munich", "Juventus",
         "Paris Saint-Germain", "Arsenal", "Los Angeles Lakers", "Golden State Warriors", "Boston Celtics",
         "New York Yankees", "Chicago Bulls", "Kansas City Chiefs", "Toronto Maple Leafs", "Ajax"]
LEAGUES = ["Premier League", "La Liga", "Serie A", "Bundesliga", "NBA", "NFL", "MLB", "NHL", "Champions League"]
EXERCISES = ["running", "cycling", "swimming", "yoga", "weightlifting", "walking", "rowing", "hiking", "pilates",
             "boxing"]
CARRIERS = ["UPS", "FedEx", "DHL", "USPS", "Royal Mail", "La Poste"]
DEPARTMENTS = ["Engineering", "Marketing", "Sales", "Finance", "HR", "Support", "Legal", "Operations", "Design"]
JOB_TITLES = ["Software Engineer", "Product Manager", "Data Analyst", "UX Designer", "Account Executive",
              "Customer Success Manager", "DevOps Engineer", "Marketing Specialist", "Financial Analyst"]
UNITS = {"length": ["km", "mi", "m", "ft", "in", "cm", "yd"], "mass": ["kg", "lb", "g", "oz"],
         "temperature": ["C", "F", "K"], "volume": ["l", "ml", "gal", "cup"], "speed": ["km/h", "mph", "m/s"]}
UNIT_WORDS = {"km": ["km", "kilometers", "kilometres"], "mi": ["miles", "mi"], "m": ["meters", "metres", "m"],
              "ft": ["feet", "ft"], "in": ["inches"], "cm": ["cm", "centimeters"], "yd": ["yards"],
              "kg": ["kg", "kilograms", "kilos"], "lb": ["pounds", "lbs", "lb"], "g": ["grams", "g"],
              "oz": ["ounces", "oz"], "C": ["celsius", "degrees celsius", "°C"], "F": ["fahrenheit", "°F"],
              "K": ["kelvin"], "l": ["liters", "litres"], "ml": ["ml", "milliliters"], "gal": ["gallons"],
              "cup": ["cups"], "km/h": ["km/h", "kilometers per hour"], "mph": ["mph", "miles per hour"],
              "m/s": ["m/s", "meters per second"]}
TICKET_TEXTS = {
    "billing": ["I was charged twice for my subscription this month.", "Why is there a $49 fee on my invoice?",
                "My card was billed after I cancelled my plan.", "I need a refund for the annual plan I bought by mistake.",
                "The invoice shows the wrong VAT number.", "I was charged for 5 seats but we only have 3 users.",
                "Can you send me a receipt for my last payment?", "My payment failed but the money left my account.",
                "The price went up without any notice, please explain.", "I want to switch from monthly to yearly billing.",
                "Promo code SAVE20 was not applied to my order.", "double charge on my credit card yesterday",
                "hi, you took money from me twice?? fix this", "Please update the billing address on my account."],
    "bug": ["The app crashes every time I open the settings page.", "Export to CSV produces an empty file.",
            "The dashboard shows a blank screen in Firefox.", "Notifications arrive two hours late.",
            "I get error 500 when I upload a profile picture.", "Search returns no results even for exact names.",
            "The mobile app freezes after the latest update.", "Dates in the report are off by one day.",
            "Clicking save does nothing, my changes are lost.", "the sync button spins forever and nothing happens",
            "Dark mode makes the text unreadable in the editor.", "The API returns a timeout for every request since 9am."],
    "account": ["I can't log in, it says my password is wrong.", "Please delete my account and all my data.",
                "How do I change the email address on my account?", "I never received the verification email.",
                "My account was locked after too many attempts.", "I want to add a second admin to our workspace.",
                "Two-factor codes are not accepted anymore.", "Can I transfer my account to a colleague?",
                "i forgot my username", "Please reset my password, I lost access to my phone."],
    "other": ["Do you have an office in Berlin?", "What are your opening hours during the holidays?",
              "I love the new design, great work!", "Can I suggest a feature for the next release?",
              "Are you hiring interns this summer?", "Is there a student discount?",
              "Which integrations do you support?", "Can I get a quote for 200 licenses?",
              "just wanted to say thanks for the quick help last week"],
}
REVIEW_TEXTS = {
    "positive": ["Absolutely love it, works perfectly.", "Great service and fast delivery!",
                 "Best coffee I've had in years.", "The staff were friendly and helpful.",
                 "Exceeded my expectations, would buy again.", "Super easy to set up, five stars."],
    "negative": ["Terrible experience, the product broke after two days.", "Waited an hour and nobody helped us.",
                 "Not worth the money at all.", "The app keeps crashing, very frustrating.",
                 "Rude staff and cold food.", "Arrived late and damaged."],
    "neutral": ["It's okay, does what it says.", "Delivery took the expected time.", "Average hotel, nothing special.",
                "The package arrived on Tuesday.", "It works, but the manual is confusing.", "Price is fair for what you get."],
}
JOKES = ["Why do programmers prefer dark mode? Because light attracts bugs.",
         "I told my computer I needed a break, and it said: no problem, I'll go to sleep.",
         "Why did the scarecrow win an award? Because he was outstanding in his field.",
         "What do you call a fake noodle? An impasta.",
         "Why don't scientists trust atoms? Because they make up everything.",
         "I would tell you a UDP joke, but you might not get it."]
GENERAL_QA = [("What is the capital of Australia?", "The capital of Australia is Canberra."),
              ("How many days are in a leap year?", "A leap year has 366 days."),
              ("What does CPU stand for?", "CPU stands for central processing unit."),
              ("Who wrote Romeo and Juliet?", "William Shakespeare wrote Romeo and Juliet."),
              ("What's the boiling point of water in Fahrenheit?", "Water boils at 212 °F at sea level."),
              ("How many continents are there?", "There are seven continents."),
              ("What is the largest planet in our solar system?", "Jupiter is the largest planet in the solar system."),
              ("What does HTTP stand for?", "HTTP stands for Hypertext Transfer Protocol."),
              ("how many minutes are in a day", "There are 1,440 minutes in a day."),
              ("What language is spoken in Brazil?", "The official language of Brazil is Portuguese."),
              ("What is photosynthesis?", "Photosynthesis is how plants turn light, water and carbon dioxide into sugar and oxygen."),
              ("Can you explain what an API is in one sentence?", "An API is a defined way for one program to ask another program for data or actions."),
              ("What's the difference between RAM and storage?", "RAM is fast temporary memory for running programs; storage keeps files when the power is off."),
              ("Who painted the Mona Lisa?", "Leonardo da Vinci painted the Mona Lisa."),
              ("What is 15% of 200?", "15% of 200 is 30.")]
GREETINGS = [("hi", "Hi! How can I help you today?"), ("Hello!", "Hello! What can I do for you?"),
             ("hey there", "Hey! What do you need?"), ("Good morning", "Good morning! How can I help?"),
             ("thanks!", "You're welcome!"), ("Thank you so much", "You're welcome, happy to help."),
             ("ok cool", "Great. Let me know if you need anything else."), ("bye", "Goodbye! Have a great day."),
             ("who are you?", "I'm an assistant that can use the tools available here to help with your requests."),
             ("what can you do?", None), ("perfect, that's all", "Glad I could help!"),
             ("how are you?", "I'm doing well, thanks. What can I do for you?")]

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def number_words(n):
    """English words for 0 <= n < 1,000,000 ("twenty-five", "three hundred and ten")."""
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("-" + ONES[n % 10] if n % 10 else "")
    if n < 1000:
        rest = n % 100
        return ONES[n // 100] + " hundred" + (" and " + number_words(rest) if rest else "")
    rest = n % 1000
    return number_words(n // 1000) + " thousand" + ((" and " if rest < 100 else " ") + number_words(rest) if rest else "")


def person(rng):
    return rng.choice(FIRST) + " " + rng.choice(LAST)


def email_of(rng, name=None):
    name = name or person(rng)
    f, l = name.lower().split(" ", 1)
    l = l.replace(" ", "")
    user = rng.choice([f + "." + l, f + l[0], f[0] + l, f, f + "_" + l, f + str(rng.randint(1, 99))])
    return user + "@" + rng.choice(EMAIL_DOMAINS)


def phone(rng):
    return rng.choice(["+1 415 555 ", "+44 20 7946 ", "+1 212 555 ", "+33 1 42 68 ", "+49 30 9018 "]) + \
        "%04d" % rng.randint(0, 9999)


def path(rng, absolute=None):
    absolute = rng.random() < 0.4 if absolute is None else absolute
    p = rng.choice(DIRS) + "/" + rng.choice(FILES)
    return rng.choice(ABS_ROOTS) + "/" + p if absolute else p


def dir_path(rng, absolute=None):
    absolute = rng.random() < 0.4 if absolute is None else absolute
    d = rng.choice(DIRS)
    return rng.choice(ABS_ROOTS) + "/" + d if absolute else d


def ident(rng, prefix, digits=5):
    return prefix + str(rng.randint(10 ** (digits - 1), 10 ** digits - 1))


def sql_query(rng):
    t = rng.choice(list(DB_TABLES))
    cols = DB_TABLES[t]
    c = rng.choice(cols[1:])
    forms = ["SELECT * FROM %s LIMIT %d" % (t, rng.choice([5, 10, 20, 50])),
             "SELECT COUNT(*) FROM %s" % t,
             "SELECT %s, %s FROM %s ORDER BY %s DESC LIMIT %d" % (cols[0], c, t, cols[-1], rng.choice([5, 10])),
             "SELECT %s, COUNT(*) FROM %s GROUP BY %s" % (c, t, c),
             "SELECT * FROM %s WHERE %s = %d" % (t, cols[0], rng.randint(1, 500))]
    if t == "orders":
        forms.append("SELECT SUM(total) FROM orders WHERE status = 'paid'")
    if t == "customers":
        forms.append("SELECT name, email FROM customers WHERE country = '%s'" % rng.choice(["FR", "US", "DE", "JP"]))
    return rng.choice(forms)


class Day:
    """Dates relative to a fixed "today" that the system message states."""

    def __init__(self, today):
        self.today = today

    def system_line(self, rng):
        t = self.today
        return rng.choice([
            "Today is %s, %s %d, %d." % (WEEKDAYS[t.weekday()], MONTHS[t.month - 1], t.day, t.year),
            "Current date: %s (%s)." % (t.isoformat(), WEEKDAYS[t.weekday()]),
            "The current date is %s %d %s %d." % (WEEKDAYS[t.weekday()], t.day, MONTHS[t.month - 1], t.year),
            "Today's date is %s." % t.isoformat()])

    def pick(self, rng, future=True):
        """(ISO date, [ways to say it])."""
        t = self.today
        k = rng.random()
        if k < 0.15:
            d, says = t + _dt.timedelta(days=1), ["tomorrow"]
        elif k < 0.22:
            d, says = t, ["today"]
        elif k < 0.3:
            d, says = t + _dt.timedelta(days=2), ["the day after tomorrow", "in two days"]
        elif k < 0.45:
            n = rng.randint(1, 7)
            d = t + _dt.timedelta(days=n)
            wd = WEEKDAYS[d.weekday()]
            says = ["on " + wd, "this " + wd] if n < 7 else ["next " + wd]
            says = [s.split(" ", 1)[1] if rng.random() < 0.3 else s for s in says]
        elif k < 0.5 and not future:
            d, says = t - _dt.timedelta(days=1), ["yesterday"]
        else:
            d = t + _dt.timedelta(days=rng.randint(1, 60) if future else rng.randint(-60, 60))
            m = MONTHS[d.month - 1]
            suf = "th" if 10 < d.day % 100 < 14 else {1: "st", 2: "nd", 3: "rd"}.get(d.day % 10, "th")
            says = ["%s %d" % (m, d.day), "%d %s" % (d.day, m), "%s %d%s" % (m, d.day, suf), d.isoformat(),
                    "%s %d, %d" % (m[:3], d.day, d.year), "the %d%s of %s" % (d.day, suf, m)]
        return d.isoformat(), says

    def pick_past(self, rng):
        return self.pick(rng, future=False)
