"""/settings in a group: the group's switches alone, changed only by its admins; a person's
memory stays in their private chat. Through the real PTB Application against the fake Bot
API (p46ac #2, #7)."""

from __future__ import annotations

from bot_harness import ALICE, BOB, GROUP, ask_and_get_plan, barb_bot, keyboard_data, press
from fake_bot_api import FakeBotAPI

#: Barb's own admin (``BARB_ADMINS``), no admin of the group in Telegram.
CAROL = 33


def command(fake: FakeBotAPI, name: str) -> str:
    return f"/{name}@{fake.bot['username']}"


async def test_a_groups_settings_show_no_members_memory_whoever_presses(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Alice's note from her private chat was posted to the group, and Bob's press under it
    redrew the message with Bob's notes."""
    fake = fake_telegram
    fake.chat_admins[GROUP] = {ALICE: "creator", BOB: "administrator"}
    async with barb_bot(fake, db_url) as svc:
        await svc.store.preferences.add(ALICE, "my account is 50k at broker X", kind="note")
        await svc.store.preferences.add(BOB, "Bob's broker is XYZ", kind="note")

        shown = await ask_and_get_plan(
            fake, GROUP, ALICE, command(fake, "settings"), chat_type="supergroup"
        )
        assert "50k" not in shown["text"] and "remember about you:" not in shown["text"]
        assert "shown only in a private chat with me" in shown["text"]
        assert keyboard_data(shown) == ["s:confirm", "s:charts", "s:language"]

        await press(fake, GROUP, BOB, shown, "s:charts", first_name="Bob")
        [edited] = await fake.wait_for("editMessageText", chat_id=GROUP)
        assert "charts off" in edited.result["text"]
        assert "XYZ" not in edited.result["text"] and "50k" not in edited.result["text"]
        assert keyboard_data(edited.result) == keyboard_data(shown)

        # In Alice's private chat her memory is shown, with its buttons.
        private = await ask_and_get_plan(fake, ALICE, ALICE, "/settings")
        assert "50k" in private["text"] and "XYZ" not in private["text"]
        assert "s:forget" in keyboard_data(private)


async def test_only_the_groups_admins_switch_its_settings(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Bob, a member, turned Run confirmation off for the whole group."""
    fake = fake_telegram
    fake.chat_admins[GROUP] = {ALICE: "creator"}
    async with barb_bot(fake, db_url, admins=[CAROL]) as svc:
        shown = await ask_and_get_plan(
            fake, GROUP, BOB, command(fake, "settings"), chat_type="supergroup"
        )
        assert "Only the group's admins can change these." in shown["text"]

        await press(fake, GROUP, BOB, shown, "s:confirm", first_name="Bob")
        [refused] = await fake.wait_for("answerCallbackQuery")
        assert refused.params["text"] == "Only the group's admins can change its settings."
        await press(fake, GROUP, BOB, shown, "s:language", first_name="Bob", language_code="ru")
        [_, refused] = await fake.wait_for("answerCallbackQuery", count=2)
        assert refused.params["text"] == "Менять настройки группы могут только её администраторы."
        chat = await svc.store.chats.get(GROUP)
        assert chat is not None and chat.settings.confirm_queries
        assert chat.settings.language == "auto"
        assert fake.calls("editMessageText", GROUP) == []
        # Telegram was asked once about Bob: the answer is kept for a minute.
        asked = fake.calls("getChatMember")
        assert [(r.params["chat_id"], r.params["user_id"]) for r in asked] == [(GROUP, BOB)]

        # The group's owner, and Barb's own admin (no admin of the group), may.
        await press(fake, GROUP, ALICE, shown, "s:confirm")
        await fake.wait_for("editMessageText", chat_id=GROUP)
        await press(fake, GROUP, CAROL, shown, "s:charts", first_name="Carol")
        await fake.wait_for("editMessageText", chat_id=GROUP, count=2)
        chat = await svc.store.chats.get(GROUP)
        assert chat is not None
        assert (chat.settings.confirm_queries, chat.settings.charts) == (False, False)
        assert [r.params["user_id"] for r in fake.calls("getChatMember")] == [BOB, ALICE]


async def test_a_press_telegram_cannot_check_is_answered_and_changes_nothing(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """getChatMember failing (502, the bot removed) raised out of the press: the group was
    told "Something broke on my side (reference …)" and the press was never answered; a
    press in a group that had become a supergroup was not answered either (p46ah #4)."""
    fake = fake_telegram
    fake.chat_admins[GROUP] = {ALICE: "creator"}
    async with barb_bot(fake, db_url) as svc:
        shown = await ask_and_get_plan(
            fake, GROUP, BOB, command(fake, "settings"), chat_type="supergroup"
        )
        fake.fail_next("getChatMember", error_code=502)
        await press(fake, GROUP, BOB, shown, "s:confirm", first_name="Bob")
        [unknown] = await fake.wait_for("answerCallbackQuery")
        assert unknown.params["text"] == (
            "Could not check whether you are the group's admin; try again in a minute."
        )
        fake.fail_next("getChatMember", error_code=403, description="Forbidden: bot was kicked")
        await press(fake, GROUP, BOB, shown, "s:charts", first_name="Bob", language_code="ru")
        [_, unknown] = await fake.wait_for("answerCallbackQuery", count=2)
        assert unknown.params["text"] == (
            "Не удалось проверить, администратор ли вы группы; попробуйте через минуту."
        )
        chat = await svc.store.chats.get(GROUP)
        assert chat is not None
        assert (chat.settings.confirm_queries, chat.settings.charts) == (True, True)
        assert fake.calls("editMessageText", GROUP) == []
        assert len(fake.said(GROUP)) == 1  # the /settings message, nothing after it

        # Upgraded to a supergroup meanwhile: the press in the old group moves the chat.
        new_id = GROUP - 1_000_000_000_000
        fake.upgrade_group(GROUP, new_id, user_id=ALICE, announce=False)
        await press(fake, GROUP, BOB, shown, "s:confirm", first_name="Bob")
        await fake.wait_for("answerCallbackQuery", count=3)
        assert await svc.store.chats.get(new_id) is not None
        assert fake.said(new_id) == [] and len(fake.said(GROUP)) == 1


async def test_only_the_groups_admins_choose_its_instrument(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Any member's press under /instrument changed the instrument every question in the
    group is asked about (p46ah #10)."""
    fake = fake_telegram
    fake.chat_admins[GROUP] = {ALICE: "creator"}
    async with barb_bot(fake, db_url) as svc:
        shown = await ask_and_get_plan(
            fake, GROUP, BOB, command(fake, "instrument"), chat_type="supergroup"
        )
        assert "i:ES" in keyboard_data(shown)
        before = await svc.store.chats.get(GROUP)
        assert before is not None and before.instrument != "ES"

        await press(fake, GROUP, BOB, shown, "i:ES", first_name="Bob")
        [refused] = await fake.wait_for("answerCallbackQuery")
        assert refused.params["text"] == "Only the group's admins can change its settings."
        chat = await svc.store.chats.get(GROUP)
        assert chat is not None and chat.instrument == before.instrument
        assert fake.calls("editMessageText", GROUP) == []

        await press(fake, GROUP, ALICE, shown, "i:ES")
        await fake.wait_for("editMessageText", chat_id=GROUP)
        chat = await svc.store.chats.get(GROUP)
        assert chat is not None and chat.instrument == "ES"
