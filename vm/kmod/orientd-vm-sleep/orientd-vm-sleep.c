// SPDX-License-Identifier: GPL-2.0
/*
 * orientd-vm-sleep: what the test VM needs so that a real system suspend (s2idle) returns.
 *
 * Test-harness only, loaded by vm/guest/lib.sh's suspend helpers, never part of the product.
 * Two things QEMU's PC machine (7.2, i440FX/PIIX4) lacks compared with a laptop:
 *
 *  1. The guest's root and the test shares are virtio-9p, whose driver (9pnet_virtio) has no
 *     freeze/restore: virtio-pci's system-sleep callbacks reset the device on resume
 *     (virtio_device_restore), the 9p queues are gone and every file access hangs. This module
 *     marks the virtio 9p PCI functions as syscore devices, which the PM core leaves alone, so
 *     the shares stay as they are across the suspend (s2idle does not reset QEMU's devices).
 *
 *  2. An RTC alarm does not wake an s2idle guest: on ACPI systems rtc-cmos arms the ACPI RTC
 *     fixed event as its wake source, and QEMU raises that event only when it wakes a VM from
 *     S3, so in s2idle the alarm's IRQ 8 stays masked. A laptop's chipset turns the alarm into
 *     a wake event; here, with rtc_wake=1 (the default), IRQ 8 is armed for wake-up while the
 *     system suspends (PM notifier), so the CMOS alarm itself ends the s2idle. That needs the
 *     CMOS interrupt to be the alarm's alone: with HPET's RTC emulation IRQ 8 ticks at 64 Hz
 *     and would wake at once, so the module refuses rtc_wake when HPET is enabled (boot with
 *     hpet=disable).
 *
 * Everything else on the way (the freezer, every other driver's suspend and resume callbacks,
 * the timekeeping suspension, rtc-cmos's alarm handling) is the kernel's own.
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/interrupt.h>
#include <linux/suspend.h>
#include <asm/hpet.h>

#define VIRTIO_VENDOR 0x1af4
#define VIRTIO_9P_TRANSITIONAL 0x1009
#define VIRTIO_9P_MODERN (0x1040 + 9)
#define RTC_IRQ 8

static bool rtc_wake = true;
module_param(rtc_wake, bool, 0444);
MODULE_PARM_DESC(rtc_wake, "arm the CMOS RTC's IRQ 8 for wake-up during system suspend");

static struct pci_dev *kept[8];
static int nkept;
static bool armed;

static int sleep_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	int ret;

	switch (action) {
	case PM_SUSPEND_PREPARE:
		ret = irq_set_irq_wake(RTC_IRQ, 1);
		armed = ret == 0;
		pr_info("orientd-vm-sleep: IRQ %d (RTC) armed for wake-up: %d\n", RTC_IRQ, ret);
		break;
	case PM_POST_SUSPEND:
		if (armed)
			irq_set_irq_wake(RTC_IRQ, 0);
		armed = false;
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block sleep_nb = { .notifier_call = sleep_notify };

static int __init vm_sleep_init(void)
{
	struct pci_dev *pdev = NULL;

	if (rtc_wake && is_hpet_enabled()) {
		pr_err("orientd-vm-sleep: HPET emulates the RTC interrupt (64 Hz ticks on IRQ %d would wake at once): boot with hpet=disable\n",
		       RTC_IRQ);
		return -EBUSY;
	}
	while ((pdev = pci_get_device(VIRTIO_VENDOR, PCI_ANY_ID, pdev))) {
		if (pdev->device != VIRTIO_9P_TRANSITIONAL && pdev->device != VIRTIO_9P_MODERN)
			continue;
		if (nkept == ARRAY_SIZE(kept))
			break;
		dev_pm_syscore_device(&pdev->dev, true);
		kept[nkept++] = pci_dev_get(pdev);
		pci_info(pdev, "orientd-vm-sleep: virtio 9p function left out of system sleep\n");
	}
	pci_dev_put(pdev);
	if (rtc_wake)
		register_pm_notifier(&sleep_nb);
	return 0;
}

static void __exit vm_sleep_exit(void)
{
	int i;

	if (rtc_wake)
		unregister_pm_notifier(&sleep_nb);
	for (i = 0; i < nkept; i++) {
		dev_pm_syscore_device(&kept[i]->dev, false);
		pci_dev_put(kept[i]);
	}
}

module_init(vm_sleep_init);
module_exit(vm_sleep_exit);
MODULE_DESCRIPTION("orientd test VM: keep the 9p shares across system sleep, RTC alarm wakes s2idle");
MODULE_LICENSE("GPL");
