// Making a declared message: its kind's name, its generation and its fields, fitted to the frame.
#include "wire/message_declaration.h"

#include "wire/message_bounds.h"

namespace ddplaunch::messages {

rendezvous::Message make_message(Kind kind, Generation generation, std::map<std::string, std::string> fields) {
  rendezvous::Message m;
  m.type = std::string(kind_name(kind));
  m.generation = generation;
  m.fields = std::move(fields);
  fit_for_wire(m);
  return m;
}

}  // namespace ddplaunch::messages
