// The whole rendezvous module: protocol types, server, client, status query.
#pragma once

#include "ddplaunch/rendezvous/client.h"
#include "ddplaunch/rendezvous/server.h"
#include "ddplaunch/rendezvous/types.h"
