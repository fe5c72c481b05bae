// SPDX-License-Identifier: MIT
/*
 * Pre-validation with xlb's own verifier (verifier/xbpf_verifier.h): xlbd
 * runs it on every object it loads (balancer.bpf.o, healthcheck.bpf.o)
 * before the kernel sees it, on the very bytes it then hands to libbpf
 * (xlb_object_read once, then verify and bpf_object__open_mem the same
 * buffer), and `lbctl verify FILE` runs it on any object.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"

#ifdef XLB_HAVE_XBPF_VERIFIER
#include "xbpf.h"
#include "xbpf_verifier.h"

static int quiet(enum xbpf_print_level level, const char *fmt, va_list args)
{
	return 0;
}

int xlb_verify_object_mem(const void *buf, size_t len, const char *path, json_t **ret_json,
			  struct xlb_err *err)
{
	struct xbpf_object *obj;
	struct xbpf_prog *prog = NULL;
	json_t *progs = json_array();
	xbpf_print_fn old = xbpf_set_print(quiet);
	int ret = 0, n = 0;

	errno = 0;
	obj = xbpf_object__open_mem(buf, len, NULL);
	xbpf_set_print(old);
	if (!obj) {
		json_decref(progs);
		return xlb_err_set(err, -errno ? -errno : -EINVAL, "cannot open %s: %s", path,
				   strerror(errno));
	}
	while ((prog = xbpf_object__next_prog(obj, prog))) {
		struct xbpf_verify_info info;
		XBPF_OPTS(xbpf_verify_opts, opts);
		json_t *depths = json_array();
		int r;

		memset(&info, 0, sizeof(info));
		r = xbpf_verify(prog, &opts, &info);
		for (uint32_t f = 0; f < info.func_cnt && f < XBPF_MAX_SUBPROGS; f++)
			json_array_append_new(depths, json_integer(info.stack_depth[f]));
		json_array_append_new(progs,
				      json_pack("{s:s, s:s, s:b, s:I, s:I, s:o, s:s, s:s}", "name",
						xbpf_prog__name(prog), "section", xbpf_prog__section(prog),
						"accepted", r == 0, "insn_processed",
						(json_int_t)info.insn_processed, "subprograms",
						(json_int_t)info.func_cnt, "stack_depth", depths, "error",
						r ? info.err_msg : "", "line", r ? info.err_line : ""));
		/* Any verdict of the verifier, limits included, is a rejection. */
		if (r && !ret)
			ret = xlb_err_set(err, info.rejected ? -EACCES : r,
					  "program %s: insn %d: %s", xbpf_prog__name(prog), info.err_insn,
					  info.err_msg);
		n++;
	}
	xbpf_object__close(obj);
	if (!n && !ret)
		ret = xlb_err_set(err, -ENOENT, "%s holds no program", path);
	if (ret_json)
		*ret_json = progs;
	else
		json_decref(progs);
	return ret;
}
#else
int xlb_verify_object_mem(const void *buf, size_t len, const char *path, json_t **ret_json,
			  struct xlb_err *err)
{
	if (ret_json)
		*ret_json = NULL;
	return xlb_err_set(err, -ENOTSUP, "this build has no xlb verifier (verifier/ not built)");
}
#endif

int xlb_object_read(const char *path, void **ret_buf, size_t *ret_len, struct xlb_err *err)
{
	struct stat st;
	void *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;

	if (fd < 0)
		return xlb_err_set(err, -errno, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) || st.st_size <= 0 || st.st_size > XLB_OBJECT_MAX) {
		e = errno ? -errno : -EFBIG;
		close(fd);
		return xlb_err_set(err, e, "%s: not a BPF object of 1..%d bytes", path, XLB_OBJECT_MAX);
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		close(fd);
		return xlb_err_set(err, -ENOMEM, "out of memory");
	}
	for (size_t off = 0; off < (size_t)st.st_size;) {
		ssize_t r = read(fd, (char *)buf + off, (size_t)st.st_size - off);

		if (r <= 0) {
			e = r ? -errno : -EIO;
			free(buf);
			close(fd);
			return xlb_err_set(err, e, "cannot read %s", path);
		}
		off += (size_t)r;
	}
	close(fd);
	*ret_buf = buf;
	*ret_len = (size_t)st.st_size;
	return 0;
}

int xlb_verify_object(const char *path, json_t **ret_json, struct xlb_err *err)
{
	size_t len;
	void *buf;
	int ret;

	if (ret_json)
		*ret_json = NULL;
	ret = xlb_object_read(path, &buf, &len, err);
	if (ret)
		return ret;
	ret = xlb_verify_object_mem(buf, len, path, ret_json, err);
	free(buf);
	return ret;
}
