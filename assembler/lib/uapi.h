/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Linux 6.8-6.15 uapi that Debian 12's kernel headers (6.1) lack. Numbers and
 * layouts are upstream's (include/uapi/linux/{mount,fanotify,stat}.h).
 */
#ifndef ROOTASM_UAPI_H
#define ROOTASM_UAPI_H

#include <stdint.h>

#ifndef __NR_statmount
#define __NR_statmount 457
#endif
#ifndef __NR_listmount
#define __NR_listmount 458
#endif
#ifndef __NR_open_tree_attr
#define __NR_open_tree_attr 467
#endif

#define RA_STATX_MNT_ID_UNIQUE		0x00004000U

struct ra_mnt_id_req {
	uint32_t size;
	uint32_t spare;
	uint64_t mnt_id;
	uint64_t param;
	uint64_t mnt_ns_id;
};
#define RA_MNT_ID_REQ_SIZE_VER0		24
#define RA_MNT_ID_REQ_SIZE_VER1		32

struct ra_statmount {
	uint32_t size;
	uint32_t mnt_opts;
	uint64_t mask;
	uint32_t sb_dev_major, sb_dev_minor;
	uint64_t sb_magic;
	uint32_t sb_flags;
	uint32_t fs_type;
	uint64_t mnt_id, mnt_parent_id;
	uint32_t mnt_id_old, mnt_parent_id_old;
	uint64_t mnt_attr, mnt_propagation, mnt_peer_group, mnt_master, propagate_from;
	uint32_t mnt_root, mnt_point;
	uint64_t mnt_ns_id;
	uint32_t fs_subtype, sb_source;
	uint32_t opt_num, opt_array, opt_sec_num, opt_sec_array;
	uint64_t supported_mask;
	uint32_t mnt_uidmap_num, mnt_uidmap, mnt_gidmap_num, mnt_gidmap;
	uint64_t __spare2[43];
	char str[];
};

#define RA_STATMOUNT_SB_BASIC		0x00000001U
#define RA_STATMOUNT_MNT_BASIC		0x00000002U
#define RA_STATMOUNT_MNT_ROOT		0x00000008U
#define RA_STATMOUNT_MNT_POINT		0x00000010U
#define RA_STATMOUNT_FS_TYPE		0x00000020U
#define RA_STATMOUNT_MNT_NS_ID		0x00000040U
#define RA_STATMOUNT_MNT_OPTS		0x00000080U
#define RA_STATMOUNT_SB_SOURCE		0x00000200U
#define RA_STATMOUNT_SUPPORTED_MASK	0x00001000U
#define RA_STATMOUNT_MNT_UIDMAP		0x00002000U
#define RA_STATMOUNT_MNT_GIDMAP		0x00004000U

#define RA_LSMT_ROOT			0xffffffffffffffffULL

/* fanotify mount notifications (Linux 6.15) */
#define RA_FAN_MNT_ATTACH		0x01000000
#define RA_FAN_MNT_DETACH		0x02000000
#define RA_FAN_REPORT_MNT		0x00004000
#define RA_FAN_MARK_MNTNS		0x00000110
#define RA_FAN_EVENT_INFO_TYPE_MNT	7

struct ra_fanotify_event_info_mnt {
	uint8_t info_type;		/* struct fanotify_event_info_header */
	uint8_t pad;
	uint16_t len;
	uint64_t mnt_id;		/* naturally aligned: at offset 8 */
};

#endif
