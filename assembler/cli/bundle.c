// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cli.h"
int cmd_bundle(int argc, char **argv) { return cli_usage("todo"); }
