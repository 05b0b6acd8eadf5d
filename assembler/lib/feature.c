// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel features rootasm probes (probe.c) and keeps answers about
 * (probecache.c): their names and what each is, by enum rootasm_feature.
 */
#include "context.h"
#include "util.h"

static const struct {
	const char *name, *desc;
} feats[RA_FEAT_COUNT] = {
	[ROOTASM_FEAT_MOUNT_API] = { "mount-api", "fsopen/fsconfig/fsmount/move_mount/open_tree (Linux 5.2)" },
	[ROOTASM_FEAT_MOUNT_SETATTR] = { "mount-setattr", "mount_setattr() (Linux 5.12)" },
	[ROOTASM_FEAT_OPENAT2] = { "openat2-in-root", "openat2() with RESOLVE_IN_ROOT (Linux 5.6)" },
	[ROOTASM_FEAT_LOOP_CONFIGURE] = { "loop-configure", "LOOP_CONFIGURE (Linux 5.8)" },
	[ROOTASM_FEAT_OVL_FD_LAYERS] = { "overlay-fd-layers", "overlayfs layers passed by fd with FSCONFIG_SET_FD (Linux 6.13)" },
	[ROOTASM_FEAT_FSCONFIG_OPATH] = { "fsconfig-opath-fd", "FSCONFIG_SET_FD taking O_PATH fds (Linux 6.15)" },
	[ROOTASM_FEAT_OPEN_TREE_DETACHED] = { "open-tree-detached", "open_tree(OPEN_TREE_CLONE) of a detached mount (Linux 6.15)" },
	[ROOTASM_FEAT_MOVE_DETACHED] = { "move-detached-onto-detached", "move_mount of a detached tree onto a detached tree (Linux 6.15)" },
	[ROOTASM_FEAT_OVL_DETACHED_LAYERS] = { "overlay-detached-layers", "overlayfs layers that are detached mounts (Linux 6.15)" },
	[ROOTASM_FEAT_OVL_OVERRIDE_CREDS] = { "overlay-override-creds", "overlayfs override_creds option (Linux 6.15)" },
	[ROOTASM_FEAT_OVL_CREDS_NOADMIN] = { "overlay-override-creds-unprivileged", "override_creds recorded without CAP_SYS_ADMIN over detached layers (Linux 6.15-6.16; refused since 6.17)" },
	[ROOTASM_FEAT_PIDFD_INFO_EXIT] = { "pidfd-info-exit", "PIDFD_GET_INFO with PIDFD_INFO_EXIT (Linux 6.15)" },
	[ROOTASM_FEAT_FANOTIFY_MNT] = { "fanotify-mount-events", "fanotify FAN_MNT_ATTACH/FAN_MNT_DETACH with FAN_MARK_MNTNS (Linux 6.15)" },
	[ROOTASM_FEAT_STATMOUNT_IDMAP] = { "statmount-idmap", "statmount() STATMOUNT_MNT_UIDMAP/GIDMAP (Linux 6.15)" },
	[ROOTASM_FEAT_OPEN_TREE_ATTR] = { "open-tree-attr", "open_tree_attr() (Linux 6.15)" },
	[ROOTASM_FEAT_IDMAP_IDMAPPED] = { "idmap-of-idmapped", "an idmapped mount created from an idmapped mount (Linux 6.15)" },
};

unsigned int rootasm_feature_count(void)
{
	return RA_FEAT_COUNT;
}

const char *rootasm_feature_name(enum rootasm_feature f)
{
	return (unsigned int)f < RA_FEAT_COUNT ? feats[f].name : NULL;
}

const char *rootasm_feature_desc(enum rootasm_feature f)
{
	return (unsigned int)f < RA_FEAT_COUNT ? feats[f].desc : NULL;
}
