// The policy's state document (policy_state.h), one field at a time: StateWriter turns values
// into JSON, StateReader reads them back and names the first field that is missing or has the
// wrong type. Each saved type lists its fields once (StateFields<T>::list) and both run
// through that list, so what is saved and what is restored cannot drift apart.
#pragma once

#include <concepts>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ddplaunch/rendezvous/generation.h"
#include "policy/init_tracker.h"  // PolicyClock

namespace ddplaunch {

using StateJson = nlohmann::json;

// Specialised for every saved record and class (record_state.h, part_state.h, policy_state.cpp):
//   template <class Io, class Self> static void list(Io& io, Self& self) { io("name", self.name_); ... }
// Self is `const T` while saving and `T` while restoring; a class befriends its specialisation.
template <class T>
struct StateFields;

// Specialised for every saved enum (record_state.h). Enums are saved by name, so that a
// reordered enum cannot change what an older document means.
template <class E>
struct StateNames;
template <class E, auto Name, auto Parse>
struct NamedEnum {
  static std::string_view name(E value) { return Name(value); }
  static std::optional<E> parse(std::string_view text) { return Parse(text); }
};

namespace state_shape {
template <class T, template <class...> class Of>
inline constexpr bool kIs = false;
template <template <class...> class Of, class... A>
inline constexpr bool kIs<Of<A...>, Of> = true;

template <class T>
concept Optional = kIs<T, std::optional>;
template <class T>
concept Pair = kIs<T, std::pair>;
template <class T>
concept Map = kIs<T, std::map>;  // saved as a list of [key, value] pairs: JSON keys are only text
template <class T>
concept List = kIs<T, std::vector> || kIs<T, std::deque> || kIs<T, std::set>;

// What one item of a list or map is read into (a map's keys are not const there).
template <class T>
struct Item {
  using type = typename T::value_type;
};
template <class K, class V, class... Rest>
struct Item<std::map<K, V, Rest...>> {
  using type = std::pair<K, V>;
};
}  // namespace state_shape

class StateWriter {
 public:
  explicit StateWriter(PolicyClock::time_point now) : now_(now) {}

  template <class T>
  void operator()(const char* key, const T& value) {
    json_[key] = encode(value);
  }
  StateJson take() && { return std::move(json_); }

 private:
  template <class T>
  StateJson encode(const T& value) const;
  // Text that is not valid UTF-8 (a worker's last output lines may be anything) cannot be a
  // JSON string: it is saved as {"hex": "..."}, so that it comes back byte for byte.
  static StateJson encode_text(const std::string& text);
  static StateJson encode_engine(const std::mt19937& engine);
  long long offset_ms(PolicyClock::time_point t) const;

  PolicyClock::time_point now_;
  StateJson json_ = StateJson::object();
};

class StateReader {
 public:
  // Reads the fields of `object` (a JSON object) found at `path`; the first problem goes to
  // `error`, after which every read is skipped. `now`: the restore's time, to re-base on.
  StateReader(const StateJson& object, std::string path, PolicyClock::time_point now, std::string* error)
      : json_(object), path_(std::move(path)), now_(now), error_(error) {}

  template <class T>
  void operator()(const char* key, T& value) {
    if (failed()) return;
    const std::string where = path_.empty() ? key : path_ + "." + key;
    const auto it = json_.find(key);
    if (it == json_.end()) return fail(where, "is missing");
    decode(*it, where, value);
  }
  bool failed() const { return !error_->empty(); }

 private:
  template <class T>
  void decode(const StateJson& json, const std::string& where, T& value) const;
  // Keeps the first problem only: what follows it is likely its echo.
  void fail(const std::string& where, const std::string& what) const;
  void fail_type(const std::string& where, const char* expected, const StateJson& found) const;
  std::optional<long long> integer(const StateJson& json, const std::string& where, long long min,
                                   long long max) const;
  void decode_text(const StateJson& json, const std::string& where, std::string& text) const;
  void decode_engine(const StateJson& json, const std::string& where, std::mt19937& engine) const;
  void decode_time(const StateJson& json, const std::string& where, PolicyClock::time_point& t) const;

  const StateJson& json_;
  std::string path_;
  PolicyClock::time_point now_;
  std::string* error_;
};

template <class T>
StateJson StateWriter::encode(const T& value) const {
  using namespace state_shape;
  if constexpr (std::is_arithmetic_v<T>) {
    return value;
  } else if constexpr (std::is_same_v<T, Generation>) {
    return value.value;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return encode_text(value);
  } else if constexpr (std::is_same_v<T, PolicyClock::time_point>) {
    return offset_ms(value);
  } else if constexpr (std::is_enum_v<T>) {
    return std::string(StateNames<T>::name(value));
  } else if constexpr (std::is_same_v<T, std::mt19937>) {
    return encode_engine(value);
  } else if constexpr (Optional<T>) {
    return value ? encode(*value) : StateJson(nullptr);
  } else if constexpr (Pair<T>) {
    return StateJson::array({encode(value.first), encode(value.second)});
  } else if constexpr (Map<T> || List<T>) {
    StateJson out = StateJson::array();
    for (const auto& item : value) out.push_back(encode(item));
    return out;
  } else {
    StateWriter fields(now_);
    StateFields<std::remove_const_t<T>>::list(fields, value);
    return std::move(fields).take();
  }
}

template <class T>
void StateReader::decode(const StateJson& json, const std::string& where, T& value) const {
  using namespace state_shape;
  if (failed()) return;
  if constexpr (std::is_same_v<T, bool>) {
    if (!json.is_boolean()) return fail_type(where, "true or false", json);
    value = json.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    static_assert(sizeof(T) <= sizeof(long long) && (std::is_signed_v<T> || sizeof(T) < sizeof(long long)));
    if (auto n = integer(json, where, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()))
      value = static_cast<T>(*n);
  } else if constexpr (std::is_same_v<T, Generation>) {
    if (auto n = integer(json, where, 0, std::numeric_limits<long long>::max())) value.value = *n;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!json.is_number()) return fail_type(where, "a number", json);
    value = json.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    decode_text(json, where, value);
  } else if constexpr (std::is_same_v<T, PolicyClock::time_point>) {
    decode_time(json, where, value);
  } else if constexpr (std::is_enum_v<T>) {
    if (!json.is_string()) return fail_type(where, "a name", json);
    const auto parsed = StateNames<T>::parse(json.get_ref<const std::string&>());
    if (!parsed) return fail_type(where, "a known name", json);
    value = *parsed;
  } else if constexpr (std::is_same_v<T, std::mt19937>) {
    decode_engine(json, where, value);
  } else if constexpr (Optional<T>) {
    if (json.is_null()) return value.reset();
    if constexpr (std::default_initializable<typename T::value_type>) {
      if (!value) value.emplace();
    } else if (!value) {  // made from the settings (Membership): absent here means the settings differ
      return fail(where, "is saved, but these settings have no place for it");
    }
    decode(json, where, *value);
  } else if constexpr (Pair<T>) {
    if (!json.is_array() || json.size() != 2) return fail_type(where, "a pair [first, second]", json);
    decode(json[0], where + "[0]", value.first);
    decode(json[1], where + "[1]", value.second);
  } else if constexpr (Map<T> || List<T>) {
    if (!json.is_array()) return fail_type(where, "a list", json);
    value.clear();
    for (std::size_t i = 0; i < json.size() && !failed(); ++i) {
      typename Item<T>::type item{};
      decode(json[i], where + "[" + std::to_string(i) + "]", item);
      value.insert(value.end(), std::move(item));
    }
  } else {
    if (!json.is_object()) return fail_type(where, "an object", json);
    StateReader fields(json, where, now_, error_);
    StateFields<T>::list(fields, value);
  }
}

}  // namespace ddplaunch
