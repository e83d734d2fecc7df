// The launcher's own messages on the rendezvous connection: one enum of kinds (message_kind.h)
// and one typed payload per kind, each declared once with its fields, their bounds and how a
// peer's text is made printable (WireFields, message_declaration.h); encode<Payload> and
// decode<Payload> follow from that declaration, so both ends agree. A decode gives nullopt when
// the message is not of its kind or a field refuses it. The families' records:
#pragma once

#include "wire/message_kind.h"

#include "wire/debug_messages.h"            // a rank's debugger, relayed
#include "wire/node_messages.h"             // a node's reports, the master's orders
#include "wire/output_steering_messages.h"  // `:ranks`, `ddplaunch tail`
#include "wire/probe_messages.h"            // the peer probe
#include "wire/stack_messages.h"            // stacks on demand
#include "wire/timeline_messages.h"         // the job's timeline
