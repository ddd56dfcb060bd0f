// What the request states outright (stated.h): the key each value is stated with, and the value
// stated for a key, which replaces a broken one.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/json_schema.h"
#include "stated.h"

namespace dloop::engine::toolcall {
namespace {

using base::Json;

// The assignment the request states (stated_assignment): each value right after its key's name.
std::string stated(const std::string& schema_text, const std::string& args, const std::string& text) {
  auto schema = base::Schema::compile(*Json::parse(schema_text));
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  const std::optional<Json> out = stated_assignment(*schema, *Json::parse(args), text);
  return out ? out->dump() : "none";
}

constexpr const char* kTimes = R"({"type": "object", "properties": {"start_time": {"type": "string"},
  "birthday": {"type": "string"}, "guests": {"type": "integer"}, "mode": {"enum": ["a", "b"]}}})";

TEST(StatedKeys, ValuesRightAfterTheirKeysNamesTakeThoseKeys) {
  EXPECT_EQ(stated(kTimes, R"({"start_time": "2027-06-21", "birthday": "22:50"})",
                   "Book it with start time 22:50 and birthday is 2027-06-21."),
            R"({"start_time":"22:50","birthday":"2027-06-21"})");
  // Three values, quotes, `=`, "set to"; an enum stays put.
  EXPECT_EQ(stated(kTimes, R"({"start_time": "x y", "birthday": "12:00", "guests": 3, "mode": "a"})",
                   "Start-Time = 12:00, guests set to 3 and birthday: \"x y\""),
            R"({"start_time":"12:00","birthday":"x y","guests":3,"mode":"a"})");
  // A key stated in a tool result's JSON; one value stated after no key name takes the key left.
  EXPECT_EQ(stated(kTimes, R"({"start_time": "CRT-7", "birthday": "pixel", "guests": 2})",
                   "{\"start_time\": \"pixel\", \"n\": 2}\nbirthday CRT-7"),
            R"({"start_time":"pixel","birthday":"CRT-7","guests":2})");
  // Values in nested objects move too.
  EXPECT_EQ(stated(R"({"type": "object", "properties": {"full_name": {"type": "string"}, "dimensions": {"type": "object",
                       "properties": {"city": {"type": "string"}}}}})",
                   R"({"full_name": "Hamburg", "dimensions": {"city": "Una"}})", "full name Una, dimensions (city Hamburg)"),
            R"({"full_name":"Una","dimensions":{"city":"Hamburg"}})");
  // The text agrees with the call: the call comes back as it is.
  EXPECT_EQ(stated(kTimes, R"({"start_time": "9", "birthday": "5"})", "start time 9, birthday 5"),
            R"({"start_time":"9","birthday":"5"})");
}

TEST(StatedKeys, NoneWhenTheTextDoesNotSayItOnce) {
  // One value not right after a key name ("for the party 2027") takes the key left; two do not.
  EXPECT_EQ(stated(kTimes, R"({"start_time": "2027", "birthday": "9"})", "start time 9 for the party 2027"),
            R"({"start_time":"9","birthday":"2027"})");
  EXPECT_EQ(stated(kTimes, R"({"start_time": "2027", "birthday": "9", "guests": 1})", "the 9 for the party 2027, guests 1"),
            "none");
  // A value after two key names (here both stated with 9), or two values after one key's name.
  EXPECT_EQ(stated(kTimes, R"({"start_time": "9", "birthday": "8"})", "start time 9, birthday 9 and 8"), "none");
  EXPECT_EQ(stated(kTimes, R"({"start_time": "9", "birthday": "8"})", "start time 9 or start time 8"), "none");
  // A value inside a longer unit is not stated ("90" is not "9"), nor one after other words.
  EXPECT_EQ(stated(kTimes, R"({"start_time": "9", "birthday": "8", "guests": 1})", "start time 90, birthday 88 9 8, guests 1"), "none");
  EXPECT_EQ(stated(kTimes, R"({"start_time": "9", "birthday": "8", "guests": 1})", "start time around 9, birthday around 8, guests 1"), "none");
  // Two values stated after no key name.
  EXPECT_EQ(stated(kTimes, R"({"start_time": "9", "birthday": "8", "guests": 3})", "9 and 8, guests 3"), "none");
  // One movable member only, or an assignment the schema rejects (guests must be an integer).
  EXPECT_EQ(stated(kTimes, R"({"start_time": "9", "mode": "a"})", "start time 9"), "none");
  EXPECT_EQ(stated(kTimes, R"({"start_time": "x", "guests": 3})", "start time 3, guests x"), "none");
}

TEST(StatedValues, TheUnitRightAfterAKeysName) {
  EXPECT_EQ(stated_value("Book it with start time 22:50 and birthday is 2027-06-21.", "birthday"), "2027-06-21");
  EXPECT_EQ(stated_value("verify it with full name Una Carvalho, using x", "full_name"), "Una Carvalho");
  EXPECT_EQ(stated_value("dimensions (content 'amber salad', guests 1386)", "content"), "amber salad");
  EXPECT_EQ(stated_value("dimensions (content 'amber salad', guests 1386)", "guests"), "1386");
  EXPECT_EQ(stated_value("Email set to lars.khan@acme.io.", "email"), "lars.khan@acme.io");
  EXPECT_EQ(stated_value("where limit is 90, please", "limit"), "90");
  EXPECT_EQ(stated_value("where start time is 22:50, and then", "start_time"), "22:50");
  EXPECT_EQ(stated_value("start time: 9:05:30.", "start_time"), "9:05:30");
  // Stated twice the same way; stated twice differently; not stated; other words in between.
  EXPECT_EQ(stated_value("city Oslo, then city Oslo", "city"), "Oslo");
  EXPECT_EQ(stated_value("city Oslo, then city Bergen", "city"), std::nullopt);
  EXPECT_EQ(stated_value("no such key here", "city"), std::nullopt);
  EXPECT_EQ(stated_value("the city, Oslo", "city"), std::nullopt);
  // The unit after the name, whatever it is: the repair's other conditions decide whether to use it.
  EXPECT_EQ(stated_value("city around Oslo", "city"), "around");
  EXPECT_EQ(stated_value("city \"Oslo", "city"), std::nullopt);  // a quote not closed
}

TEST(StatedValues, TheRequestWinsOverAToolResult) {
  // The request (first line) states one value, a tool result (a later line) another: the request's.
  EXPECT_EQ(stated_value("share the contact date set to 2030-10-13.\n{\"date\": \"2027-12-27\"}", "date"), "2030-10-13");
  // Only tool results state it, and they disagree; the request disagrees with itself.
  EXPECT_EQ(stated_value("share it\n{\"date\": \"2027-12-27\"}\n{\"date\": \"2027-12-28\"}", "date"), std::nullopt);
  EXPECT_EQ(stated_value("date 2030-10-13 or date 2030-10-14\n{\"date\": \"2030-10-13\"}", "date"), std::nullopt);
  // One line: two statements that disagree are no statement.
  EXPECT_EQ(stated_value("date 2030-10-13, {\"date\": \"2027-12-27\"}", "date"), std::nullopt);
}

// `args` after repair_stated_values with `schema`, the request `text` (also the conversation).
std::string repaired(const std::string& schema_text, const std::string& args, const std::string& text,
                     size_t* n = nullptr) {
  auto schema = base::Schema::compile(*Json::parse(schema_text));
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  Json v = *Json::parse(args);
  const size_t r = repair_stated_values(v, schema->root(), text, text);
  if (n) *n = r;
  return v.dump();
}

constexpr const char* kPerson = R"({"type": "object", "properties": {"full_name": {"type": "string"},
  "birthday": {"type": "string"}, "rating": {"type": "number"}, "guests": {"type": "integer"},
  "mode": {"enum": ["a", "b"]}, "dimensions": {"type": "object", "properties": {"city": {"type": "string"}}}}})";

TEST(StatedValues, ABrokenValueTakesTheStatedOne) {
  size_t n = 0;
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "Carvalho_name_name_", "birthday": "2-22-25"})",
                     "Add full name Una Carvalho and birthday 2020-02-25.", &n),
            R"({"full_name":"Una Carvalho","birthday":"2020-02-25"})");
  EXPECT_EQ(n, 2u);
  // Numbers, an integer, a nested object's member.
  EXPECT_EQ(repaired(kPerson, R"({"rating": 11282, "guests": 61, "dimensions": {"city": "Antwerpp"}})",
                     "rating 112.48, guests 6, dimensions (city Antwerp)"),
            R"({"rating":112.48,"guests":6,"dimensions":{"city":"Antwerp"}})");
  // The same value as an enum member's; a copy that is a part of the stated value.
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "a", "mode": "a"})", "with a as mode, full name Una"),
            R"({"full_name":"Una","mode":"a"})");
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "Berg"})", "where full name is Una Berg."), R"({"full_name":"Una Berg"})");
  // A repeat compared as text (a string and a number); a number that is not a copy; a garbled copy
  // of another member's value; a copy that starts with connecting text.
  EXPECT_EQ(repaired(kPerson, R"({"birthday": "29", "guests": 29})", "birthday 2024-04-12, guests 29"),
            R"({"birthday":"2024-04-12","guests":29})");
  EXPECT_EQ(repaired(kPerson, R"({"rating": 30668})", "rating 20.6"), R"({"rating":20.6})");
  EXPECT_EQ(repaired(kPerson, R"({"birthday": "liamour@mail.org", "full_name": "liam.mansour@mail.org"})",
                     "birthday 2028-02-10, full name liam.mansour@mail.org"),
            R"({"birthday":"2028-02-10","full_name":"liam.mansour@mail.org"})");
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "is Vikram"})", "where full name is Vikram Fontaine."),
            R"({"full_name":"Vikram Fontaine"})");
  // A value stated in a tool result's JSON.
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "Una_Carvalhoo"})", "{\"full_name\": \"Una Carvalho\"}"),
            R"({"full_name":"Una Carvalho"})");
  // A value replaced by a copy makes another a repeat, which the next round replaces.
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "INV-692", "birthday": "INV-69"})", "full name Una, birthday INV-692"),
            R"({"full_name":"Una","birthday":"INV-692"})");
  // A value repeated under two keys: the one whose key states another value takes it.
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "pixel", "birthday": "pixel"})", "full name pixel, birthday 2022-04-05"),
            R"({"full_name":"pixel","birthday":"2022-04-05"})");
}

TEST(StatedValues, ACopyOfWhatTheRequestSaysForAnotherCall) {
  auto schema = base::Schema::compile(*Json::parse(kPerson));
  ASSERT_TRUE(schema.ok());
  const std::string conversation = "book it with full name Amara Fontaine, then cancel it with full name Omar Carvalho";
  const std::string scope = "then cancel it with full name Omar Carvalho";
  Json v = *Json::parse(R"({"full_name": "Amara Fontaine"})");
  EXPECT_EQ(repair_stated_values(v, schema->root(), conversation, conversation, false), 0u);  // no scope: a copy
  EXPECT_EQ(repair_stated_values(v, schema->root(), scope, conversation, true), 1u);
  EXPECT_EQ(v.dump(), R"({"full_name":"Omar Carvalho"})");
}

TEST(StatedValues, AValueThatIsNoCopyOrRunsOnTakesTheStatedOne) {
  // Not a copy, with nothing in common with the stated value.
  EXPECT_EQ(repaired(kPerson, R"({"dimensions": {"city": "YI"}})", "dimensions with city Yerevan"),
            R"({"dimensions":{"city":"Yerevan"}})");
  EXPECT_EQ(repaired(kPerson, R"({"birthday": "Ulaanba;  ,"})", "birthday set to 2030-10-13 in Ulaanbaatar"),
            R"({"birthday":"2030-10-13"})");
  // A copy of the stated value run on into the connecting text after it.
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "Tomas Mansour and"})", "full name: Tomas Mansour and using rating 2"),
            R"({"full_name":"Tomas Mansour"})");
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "Ismael Larsen, then"})", "full name Ismael Larsen, then stop"),
            R"({"full_name":"Ismael Larsen"})");
  // A quoted stated value wins over a copy (here of a tool result's id).
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "PKG-2739"})", "with full name \"Una Berg\"\n{\"id\": \"PKG-2739\"}"),
            R"({"full_name":"Una Berg"})");
  // A copy of another member's value with a closing bracket, or of an array's item: repeats.
  EXPECT_EQ(repaired(kPerson, R"j({"birthday": "Omar Lund)", "full_name": "Omar Lund"})j",
                     "birthday 2025-01-02, (full name: Omar Lund)"),
            R"({"birthday":"2025-01-02","full_name":"Omar Lund"})");
  EXPECT_EQ(repaired(R"({"type": "object", "properties": {"city": {"type": "string"}, "tags": {"type": "array",
                       "items": {"type": "string"}}}})",
                     R"({"city": "red", "tags": ["kitchen", "red"]})", "city: Jakarta, tags kitchen and red"),
            R"({"city":"Jakarta","tags":["kitchen","red"]})");
  // A copy that is a part of another member's value, or of a key's name ("auto renew").
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "Una Carvalho", "birthday": "Carvalho"})",
                     "where full name is Una Carvalho, birthday 2025-07-09"),
            R"({"full_name":"Una Carvalho","birthday":"2025-07-09"})");
  EXPECT_EQ(repaired(R"({"type": "object", "properties": {"full_name": {"type": "string"}, "auto_renew": {"type": "boolean"}}})",
                     R"({"full_name": "renew", "auto_renew": false})", "with auto renew disabled, full name: Tariq Fontaine"),
            R"({"full_name":"Tariq Fontaine","auto_renew":false})");
  // A copy that goes on with more words of its own stays ("red market amber" after "content red").
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "red market amber"})", "full name red market amber"),
            R"({"full_name":"red market amber"})");
}

TEST(StatedValues, CopiesAndValuesInOtherWordsStay) {
  size_t n = 0;
  // A copy of the conversation stays, even when the key states another value.
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "Omar"})", "full name Una Carvalho, friend Omar", &n),
            R"({"full_name":"Omar"})");
  EXPECT_EQ(n, 0u);
  // A part of a key's name that the conversation also holds outside the key's mentions is a copy.
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "full"})", "full name Una, for a full house"), R"({"full_name":"full"})");
  // A value in other words stays where the member's schema refuses the stated one; one that
  // differs in letter case only stays.
  constexpr const char* kDated = R"({"type": "object", "properties": {"birthday": {"type": "string",
    "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}, "guests": {"type": "integer", "maximum": 10}}})";
  EXPECT_EQ(repaired(kDated, R"({"birthday": "2026-12-07"})", "birthday tomorrow"), R"({"birthday":"2026-12-07"})");
  EXPECT_EQ(repaired(kDated, R"({"guests": 61})", "guests 12"), R"({"guests":61})");
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "Una carvalho"})", "full name Una Carvalho"),
            R"({"full_name":"Una carvalho"})");
  // Not stated; a number member whose stated value is not a number; an enum.
  EXPECT_EQ(repaired(kPerson, R"({"full_name": "Unaa"})", "the name is Una"), R"({"full_name":"Unaa"})");
  EXPECT_EQ(repaired(kPerson, R"({"guests": 61})", "guests 6x"), R"({"guests":61})");
  EXPECT_EQ(repaired(kPerson, R"({"guests": 61})", "guests 6.5"), R"({"guests":61})");
  EXPECT_EQ(repaired(kPerson, R"({"mode": "b"})", "mode a"), R"({"mode":"b"})");
}

// `args` after repair_stated_lists with `schema` and the request `text`.
std::string listed(const std::string& args, const std::string& text, size_t* n = nullptr) {
  auto schema = base::Schema::compile(*Json::parse(R"({"type": "object", "properties": {
    "attendees": {"type": "array", "items": {"type": "string"}}, "items": {"type": "array", "items": {"type": "integer"}},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}, "content": {"type": "string"},
    "dimensions": {"type": "object", "properties": {"attendees": {"type": "array", "items": {"type": "string"}}}}}})"));
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  Json v = *Json::parse(args);
  const size_t r = repair_stated_lists(v, schema->root(), text);
  if (n) *n = r;
  return v.dump();
}

TEST(StatedLists, TheListRightAfterAKeysName) {
  const std::vector<std::string> keys = {"attendees", "content", "full_name"};
  using L = std::vector<std::string>;
  EXPECT_EQ(stated_list("search with attendees: galaxy, red and daisy, please?", "attendees", keys), (L{"galaxy", "red", "daisy"}));
  EXPECT_EQ(stated_list("with attendees kitchen and red and where language is english", "attendees", keys), (L{"kitchen", "red"}));
  // Cut before the next key's name; followed by nothing but punctuation up to the line's end.
  EXPECT_EQ(stated_list("attendees warm and content orchid", "attendees", keys), (L{"warm"}));
  EXPECT_EQ(stated_list("attendees warm, pixel, full name Una Berg", "attendees", keys), (L{"warm", "pixel"}));
  EXPECT_EQ(stated_list("set attendees: warm, pixel.\n{\"id\": 3}", "attendees", keys), (L{"warm", "pixel"}));
  // Cut before a linking word: "with categories warm, with content ...".
  EXPECT_EQ(stated_list("with attendees warm, with price 5", "attendees", keys), (L{"warm"}));
  // Where the list ends is not known ("big red apple"); no list; two lists that disagree.
  EXPECT_EQ(stated_list("attendees big red apple", "attendees", keys), std::nullopt);
  EXPECT_EQ(stated_list("the attendees, said Una", "attendees", keys), std::nullopt);
  EXPECT_EQ(stated_list("attendees a and b, then attendees c and d", "attendees", keys), std::nullopt);
}

TEST(StatedLists, AnArrayTakesTheStatedList) {
  size_t n = 0;
  EXPECT_EQ(listed(R"({"attendees": ["red and", "daisy"]})", "attendees: galaxy, red and daisy, please", &n),
            R"({"attendees":["galaxy","red","daisy"]})");
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(listed(R"({"attendees": ["secret and morning"], "content": "x"})", "attendees: secret and morning, content x"),
            R"({"attendees":["secret","morning"],"content":"x"})");
  // Numbers; a nested object's array; an empty array.
  EXPECT_EQ(listed(R"({"items": [25, 25, 28, 15]})", "items 15, 28 and 36"), R"({"items":[15,28,36]})");
  EXPECT_EQ(listed(R"({"dimensions": {"attendees": []}})", "dimensions (attendees warm and red)"),
            R"({"dimensions":{"attendees":["warm","red"]}})");
  // Already the list; a unit that is not a number where numbers are due; a list the schema
  // refuses (maxItems 2): the array stays.
  EXPECT_EQ(listed(R"({"attendees": ["a", "b"]})", "attendees a and b", &n), R"({"attendees":["a","b"]})");
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(listed(R"({"items": [1]})", "items 1 and two"), R"({"items":[1]})");
  EXPECT_EQ(listed(R"({"tags": ["a"]})", "tags a, b and c"), R"({"tags":["a"]})");
}

constexpr const char* kSwitches = R"({"type": "object", "properties": {"verbose": {"type": "boolean"},
  "visibility": {"enum": ["low", "medium", "high"]}, "fixed": {"type": "boolean", "const": true},
  "dimensions": {"type": "object", "properties": {"dry_run": {"type": "boolean"}}}, "city": {"type": "string"},
  "limit": {"type": "integer"}}})";

TEST(StatedLiterals, EnumAndBooleanMembersTakeTheStatedLiteral) {
  auto schema = base::Schema::compile(*Json::parse(kSwitches));
  ASSERT_TRUE(schema.ok());
  Json v = *Json::parse(R"({"verbose": false, "visibility": "low", "dimensions": {"dry_run": true}})");
  EXPECT_EQ(repair_stated_literals(v, schema->root(), "set verbose to true, visibility set to medium, dry run off"), 3u);
  EXPECT_EQ(v.dump(), R"({"verbose":true,"visibility":"medium","dimensions":{"dry_run":false}})");
  // on/yes/enabled and off/no/disabled; the literal already there.
  for (const char* yes : {"verbose on", "verbose: yes", "verbose enabled", "verbose is true"}) {
    Json w = *Json::parse(R"({"verbose": false})");
    EXPECT_EQ(repair_stated_literals(w, schema->root(), yes), 1u) << yes;
    EXPECT_EQ(w.dump(), R"({"verbose":true})") << yes;
  }
  // Not a literal of the member (an enum value in another case, a word); not stated; a const.
  for (const char* text : {"visibility Medium, verbose maybe", "nothing here", "visibility = average"}) {
    Json w = *Json::parse(R"({"verbose": false, "visibility": "low", "fixed": true})");
    EXPECT_EQ(repair_stated_literals(w, schema->root(), text), 0u) << text;
    EXPECT_EQ(w.dump(), R"({"verbose":false,"visibility":"low","fixed":true})") << text;
  }
}

TEST(StatedArguments, OptionalArgumentsTheScopeStatesAreAdded) {
  auto schema = base::Schema::compile(*Json::parse(kSwitches));
  ASSERT_TRUE(schema.ok());
  // Plainly stated strings and numbers; literals stated at all.
  Json v = *Json::parse("{}");
  EXPECT_EQ(add_stated_arguments(v, schema->root(), "with city Beirut, limit: 5, turning verbose on, visibility high"), 4u);
  EXPECT_EQ(v.dump(), R"({"verbose":true,"visibility":"high","city":"Beirut","limit":5})");
  // Not plainly ("city like"), not a literal ("verbose please"), a member already there.
  Json w = *Json::parse(R"({"limit": 2})");
  EXPECT_EQ(add_stated_arguments(w, schema->root(), "city like, verbose please, limit 5"), 0u);
  EXPECT_EQ(w.dump(), R"({"limit":2})");
}

TEST(CallScope, TheClauseThatNamesTheTool) {
  const std::vector<ChatMessage> m = {
      {"system", "tools"},
      {"user", "I want to archive my expense with content \"pixel\". After that, search for library loan author: "
               "Emil Lund, then convert the password using rating 13.6."},
      {"assistant", "<tool_call>{}</tool_call>"},
      {"tool", "{\"price\": 433.8}"}};
  EXPECT_EQ(call_scope(m, "search_library_loan"), "After that, search for library loan author: Emil Lund, \n{\"price\": 433.8}");
  EXPECT_EQ(call_scope(m, "archive_expense"), "I want to archive my expense with content \"pixel\".\n{\"price\": 433.8}");
  EXPECT_EQ(call_scope(m, "convert_password"), "then convert the password using rating 13.6.\n{\"price\": 433.8}");
  // No clause names the tool, or two name it as often: no scope.
  EXPECT_EQ(call_scope(m, "book_flight"), std::nullopt);
  EXPECT_EQ(call_scope({{"user", "Book the hotel. Then cancel the hotel."}}, "get_hotel"), std::nullopt);
  // The most words win: "cancel" and "hotel".
  EXPECT_EQ(call_scope({{"user", "Book the hotel. Then cancel the hotel."}}, "cancel_hotel"), "Then cancel the hotel.");
  // One clause is the scope of any call; no user message: no scope.
  EXPECT_EQ(call_scope({{"user", "Book the hotel with city Oslo"}, {"tool", "{}"}}, "get_weather"),
            "Book the hotel with city Oslo\n{}");
  EXPECT_EQ(call_scope({{"system", "x"}}, "book_hotel"), std::nullopt);
  // Boundary words are whole words ("authentic" holds no "then"), in any case.
  EXPECT_EQ(call_scope({{"user", "Rate the authentic cafe NEXT book the hotel"}}, "book_hotel"), "NEXT book the hotel");
}

TEST(CallScope, ArgumentsGivenToAnotherCallAreDropped) {
  auto schema = base::Schema::compile(*Json::parse(R"({"type": "object", "properties": {"employee": {"type": "string"},
    "overwrite": {"type": "boolean"}, "limit": {"type": "integer"}, "city": {"type": "string"}}, "required": ["employee"]})"));
  ASSERT_TRUE(schema.ok());
  const std::string text = "Call off translation where employee is Sofia, and afterwards show me my contact using limit 1498";
  const std::string scope = "Call off translation where employee is Sofia, and ";
  Json v = *Json::parse(R"({"employee": "Sofia", "overwrite": false, "limit": 1498, "city": "Oslo"})");
  // limit is mentioned in another clause only: dropped; overwrite and city are mentioned nowhere: kept.
  EXPECT_EQ(drop_other_calls_arguments(v, schema->root(), scope, text), 1u);
  EXPECT_EQ(v.dump(), R"({"employee":"Sofia","overwrite":false,"city":"Oslo"})");
  // A required member stays even when another clause names it.
  Json w = *Json::parse(R"({"employee": "Sofia"})");
  EXPECT_EQ(drop_other_calls_arguments(w, schema->root(), "show me my contact", "employee Sofia; show me my contact"), 0u);
  EXPECT_EQ(w.dump(), R"({"employee":"Sofia"})");
}

}  // namespace
}  // namespace dloop::engine::toolcall
