"""Project-level writes: the demo login that `rundemo` prints."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

DEMO_USERNAME = "demo"


@transaction.atomic
def ensure_demo_user(*, username: str = DEMO_USERNAME, password: str) -> AbstractBaseUser:
    """Create the demo superuser, or reset its password, so the printed login always works."""
    user_model = get_user_model()
    user, _created = user_model.objects.get_or_create(username=username)
    user.is_staff = True
    user.is_superuser = True
    user.is_active = True
    user.set_password(password)
    user.save()
    return user
