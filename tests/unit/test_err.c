// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * struct rootasm_err, through the shared library: the fields of a struct
 * rootasm_error behind accessors, and the whole of a path or a file name
 * that struct had to cut.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rootasm.h"

static void test_fields(void **state)
{
	struct rootasm_error e = { .err = ENOENT, .kind = ROOTASM_ERROR_UNSUPPORTED, .line = 3, .column = 7 };
	struct rootasm_err *err = NULL;

	(void)state;
	assert_int_equal(rootasm_err_new(&err), 0);
	assert_int_equal(rootasm_err_errno(err), 0);
	assert_string_equal(rootasm_err_path(err), "");
	strcpy(e.op, "fsconfig lowerdir+");
	strcpy(e.path, "/srv/x");
	strcpy(e.msg, "no such thing");
	strcpy(e.file, "t.yaml");
	strcpy(e.feature, "mount-setattr");
	assert_int_equal(rootasm_err_set(err, &e), 0);
	memset(&e, 0, sizeof(e));
	assert_int_equal(rootasm_err_errno(err), ENOENT);
	assert_int_equal(rootasm_err_kind(err), ROOTASM_ERROR_UNSUPPORTED);
	assert_string_equal(rootasm_err_op(err), "fsconfig lowerdir+");
	assert_string_equal(rootasm_err_path(err), "/srv/x");
	assert_string_equal(rootasm_err_message(err), "no such thing");
	assert_string_equal(rootasm_err_file(err), "t.yaml");
	assert_int_equal(rootasm_err_line(err), 3);
	assert_int_equal(rootasm_err_column(err), 7);
	assert_string_equal(rootasm_err_feature(err), "mount-setattr");
	/* a second set replaces the first */
	assert_int_equal(rootasm_err_set(err, &e), 0);
	assert_string_equal(rootasm_err_op(err), "");
	assert_int_equal(rootasm_err_set(err, NULL), -EINVAL);
	rootasm_err_free(err);
	rootasm_err_free(NULL);
	assert_int_equal(rootasm_err_new(NULL), -EINVAL);
}

/* A path of 6000 bytes: struct rootasm_error keeps 4095 of them, struct rootasm_err all. */
static void test_whole_path(void **state)
{
	struct rootasm_err *err = NULL;
	struct rootasm_layout *l = NULL;
	struct rootasm_error e = { 0 }, other = { 0 };
	struct rootasm_load_opts o = { .size = sizeof(o), .flags = ROOTASM_LOAD_OFFLINE };
	char *p = malloc(6001);

	(void)state;
	assert_non_null(p);
	p[0] = '/';
	for (size_t i = 1; i < 6000; i++)
		p[i] = i % 200 ? 'a' : '/';
	p[6000] = '\0';
	assert_int_equal(rootasm_err_new(&err), 0);
	assert_true(rootasm_layout_load(NULL, p, NULL, &l, &e) < 0);
	assert_int_equal(strlen(e.path), ROOTASM_ERR_PATH_MAX - 1);
	assert_int_equal(rootasm_err_set(err, &e), 0);
	assert_string_equal(rootasm_err_path(err), p);
	assert_int_equal(rootasm_err_errno(err), e.err);
	/* another struct with the same cut text is not taken for it */
	other = e;
	assert_int_equal(rootasm_err_set(err, &other), 0);
	assert_int_equal(strlen(rootasm_err_path(err)), ROOTASM_ERR_PATH_MAX - 1);

	/* a layout error in memory with a name of 6000 bytes: the file whole */
	o.name = p;
	memset(&e, 0, sizeof(e));
	assert_int_equal(rootasm_layout_load_mem(NULL, "version: 2\n", 11, &o, &l, &e), -EINVAL);
	assert_int_equal(rootasm_err_set(err, &e), 0);
	assert_string_equal(rootasm_err_file(err), p);
	assert_int_equal(rootasm_err_line(err), 1);
	assert_string_equal(rootasm_err_op(err), "version");
	assert_int_equal(rootasm_err_kind(err), ROOTASM_ERROR_USAGE);
	rootasm_err_free(err);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_whole_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
